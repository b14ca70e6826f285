// Incremental parser of a chat-completion SSE body into typed events (deltas, then usage), and their assembly into one result.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { CloudProtocolError, CloudStreamError, isAbortError } from './errors.js';
import { ChatCompletionChunkSchema, ErrorBodySchema, SSE_DONE, type ChatCompletionChunk, type ToolCall, type ToolCallDelta, type Usage } from './protocol.js';

/** One choice's increment: text, tool-call fragments, and the finish reason on its last delta. */
export interface ChatDeltaEvent {
  kind: 'delta';
  index: number;
  content?: string;
  toolCalls?: ToolCallDelta[];
  finishReason?: string;
  chunk: ChatCompletionChunk;
}
/** The token counts, sent once on the last chunk. */
export interface ChatUsageEvent {
  kind: 'usage';
  usage: Usage;
}
export type ChatStreamEvent = ChatDeltaEvent | ChatUsageEvent;

/**
 * Reads an SSE byte stream and yields events in order. Guarantees:
 * - events are parsed incrementally; a chunk boundary anywhere (mid-line, mid-UTF-8 character) is fine;
 * - the iterable ends normally only after `data: [DONE]`; a body that ends or breaks earlier throws
 *   CloudStreamError, a `data: {"error": ...}` event throws CloudStreamError with the server's text,
 *   a chunk that is not JSON or not a chunk throws CloudProtocolError;
 * - an aborted `signal` throws its reason; leaving the loop early (break/return) cancels the body.
 */
export async function* parseChatStream(
  body: ReadableStream<Uint8Array>,
  endpoint: string,
  signal?: AbortSignal,
): AsyncGenerator<ChatStreamEvent, void, undefined> {
  const events = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream({ onError: 'terminate' }));
  const reader = events.getReader();
  let done = false;
  try {
    while (true) {
      let next: Awaited<ReturnType<typeof reader.read>>;
      try {
        next = await reader.read();
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (isAbortError(err)) throw err;
        throw new CloudStreamError(endpoint, 'stream broke before [DONE]', { cause: err });
      }
      if (next.done) {
        if (signal?.aborted) throw signal.reason;
        throw new CloudStreamError(endpoint, 'stream ended before [DONE]');
      }
      const data = next.value.data;
      if (data.trim() === SSE_DONE) {
        done = true;
        return;
      }
      let json: unknown;
      try {
        json = JSON.parse(data);
      } catch {
        throw new CloudProtocolError(endpoint, `stream event is not JSON: ${data.slice(0, 120)}`);
      }
      const err = ErrorBodySchema.safeParse(json);
      if (err.success && !('choices' in (json as object))) throw new CloudStreamError(endpoint, err.data.error);
      const parsed = ChatCompletionChunkSchema.safeParse(json);
      if (!parsed.success) {
        throw new CloudProtocolError(endpoint, `unexpected chunk: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
      }
      const chunk = parsed.data;
      for (const choice of chunk.choices) {
        const ev: ChatDeltaEvent = { kind: 'delta', index: choice.index, chunk };
        if (typeof choice.delta.content === 'string' && choice.delta.content !== '') ev.content = choice.delta.content;
        if (choice.delta.tool_calls?.length) ev.toolCalls = choice.delta.tool_calls;
        if (typeof choice.finish_reason === 'string') ev.finishReason = choice.finish_reason;
        yield ev;
      }
      if (chunk.usage) yield { kind: 'usage', usage: chunk.usage };
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** What a whole stream amounts to: choice 0's text and tool calls, its finish reason, and the usage. */
export interface CollectedChat {
  id?: string;
  model?: string;
  content: string;
  toolCalls: ToolCall[];
  finishReason?: string;
  usage?: Usage;
}

/** Folds tool-call fragments by `index`: id/name set once, `arguments` concatenated. */
export function mergeToolCallDeltas(into: ToolCall[], deltas: ToolCallDelta[]): void {
  for (const d of deltas) {
    const call = (into[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
    if (d.id) call.id = d.id;
    if (d.function?.name) call.function.name = d.function.name;
    if (d.function?.arguments) call.function.arguments += d.function.arguments;
  }
}

/** Consumes a stream of events (choice 0 only) into one result; `onText` sees each text fragment as it arrives. */
export async function collectChatStream(events: AsyncIterable<ChatStreamEvent>, onText?: (text: string) => void): Promise<CollectedChat> {
  const out: CollectedChat = { content: '', toolCalls: [] };
  for await (const ev of events) {
    if (ev.kind === 'usage') {
      out.usage = ev.usage;
      continue;
    }
    out.id ??= ev.chunk.id;
    out.model ??= ev.chunk.model;
    if (ev.index !== 0) continue;
    if (ev.content) {
      out.content += ev.content;
      onText?.(ev.content);
    }
    if (ev.toolCalls) mergeToolCallDeltas(out.toolCalls, ev.toolCalls);
    if (ev.finishReason) out.finishReason = ev.finishReason;
  }
  out.toolCalls = out.toolCalls.filter(Boolean);
  return out;
}
