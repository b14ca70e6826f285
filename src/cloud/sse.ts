// Incremental, tolerant parser of a chat-completion answer into typed events, and their assembly into one result
// The answer is an SSE stream, or a whole JSON answer to a streaming request.
import { EventSourceParserStream } from 'eventsource-parser/stream';
import { isObject, lenientUsage, ModelProviderError, providerError, str, ToolCallPlacer, type StreamToolDelta } from './chunks.js';
import { CloudProtocolError, CloudStreamError, isAbortError } from './errors.js';
import { SSE_DONE, type ToolCall, type Usage } from './protocol.js';

export { ModelProviderError, type StreamToolDelta };

/** One choice's increment: text, thoughts, tool-call fragments, and the finish reason on its last delta. */
export interface ChatDeltaEvent {
  kind: 'delta';
  index: number;
  content?: string;
  /** The model's thinking (`reasoning_content` / `reasoning`): never part of what is said. */
  reasoning?: string;
  toolCalls?: StreamToolDelta[];
  finishReason?: string;
  chunk: { id?: string; model?: string };
}
/** The token counts, sent once on the last chunk. */
export interface ChatUsageEvent {
  kind: 'usage';
  usage: Usage;
}
export type ChatStreamEvent = ChatDeltaEvent | ChatUsageEvent;

/** Turns parsed JSON values (chunks, or one whole completion) into events; one per choice per chunk. */
class ChunkReader {
  private readonly placers = new Map<number, ToolCallPlacer>();
  /** A choice said why it finished (a stream that then closes without [DONE] is complete). */
  finished = false;

  constructor(private readonly endpoint: string) {}

  *read(json: unknown, data: string): Generator<ChatStreamEvent> {
    const error = providerError(json);
    if (error) throw new ModelProviderError(this.endpoint, error.message, error.code);
    if (!isObject(json)) throw new CloudProtocolError(this.endpoint, `unexpected chunk (not an object): ${data.slice(0, 120)}`);
    const choices = json.choices ?? [];
    const usage = lenientUsage(json.usage);
    if (!Array.isArray(choices)) throw new CloudProtocolError(this.endpoint, `unexpected chunk: choices is not a list: ${data.slice(0, 120)}`);
    if (choices.length === 0 && !usage && !('choices' in json)) {
      throw new CloudProtocolError(this.endpoint, `unexpected chunk (no choices, no usage): ${data.slice(0, 120)}`);
    }
    const chunk = { ...(str(json.id) ? { id: json.id as string } : {}), ...(str(json.model) ? { model: json.model as string } : {}) };
    for (const [i, raw] of choices.entries()) {
      if (!isObject(raw)) throw new CloudProtocolError(this.endpoint, `unexpected chunk: choice ${i} is not an object`);
      const index = typeof raw.index === 'number' && Number.isInteger(raw.index) && raw.index >= 0 ? raw.index : i;
      // A whole message where a delta belongs (a completion sent as one event, or a server's last chunk).
      const delta = isObject(raw.delta) ? raw.delta : isObject(raw.message) ? raw.message : {};
      const ev: ChatDeltaEvent = { kind: 'delta', index, chunk };
      if (typeof delta.content === 'string' && delta.content !== '') ev.content = delta.content;
      const thought = str(delta.reasoning_content) ?? str(delta.reasoning);
      if (thought) ev.reasoning = thought;
      if (Array.isArray(delta.tool_calls) && delta.tool_calls.length) {
        let placer = this.placers.get(index);
        if (!placer) this.placers.set(index, (placer = new ToolCallPlacer()));
        const placed = delta.tool_calls.map((d) => placer!.place(d)).filter((d): d is StreamToolDelta => d !== undefined);
        if (placed.length) ev.toolCalls = placed;
      } else if (delta.tool_calls !== undefined && delta.tool_calls !== null && !Array.isArray(delta.tool_calls)) {
        throw new CloudProtocolError(this.endpoint, `unexpected chunk: tool_calls is not a list: ${data.slice(0, 120)}`);
      }
      if (typeof raw.finish_reason === 'string' && raw.finish_reason !== '') {
        ev.finishReason = raw.finish_reason;
        this.finished = true;
      }
      yield ev;
    }
    if (usage) yield { kind: 'usage', usage };
  }

  /** The answer is over: a call with arguments and no name is not an answer anyone can act on. */
  end(): void {
    for (const placer of this.placers.values()) {
      if (placer.nameless()) throw new CloudProtocolError(this.endpoint, 'a streamed tool call got arguments but never a name');
    }
  }
}

const parseJson = (data: string, endpoint: string): unknown => {
  try {
    return JSON.parse(data);
  } catch {
    throw new CloudProtocolError(endpoint, `stream event is not JSON: ${data.slice(0, 120)}`);
  }
};

/**
 * Reads an SSE byte stream and yields events in order. Accepts what real endpoints send (the cases
 * are listed in chunks.ts): comments and keep-alives, `\r\n` line ends, `data:` with no space (the SSE
 * framing is eventsource-parser's), chunks without `id`/`created`/`object`, usage-only chunks, any
 * `finish_reason` or none. Guarantees:
 * - a chunk boundary anywhere (mid-line, mid-UTF-8 character) is fine;
 * - the iterable ends normally only after `data: [DONE]` (every endpoint of the corpus sends it); a
 *   body that ends or breaks earlier throws CloudStreamError;
 * - a provider error event throws ModelProviderError with the provider's message;
 * - data that is not JSON, not a chunk, or a tool call that never gets a name throws CloudProtocolError
 *   (the stream cannot be read: the caller may ask again without streaming);
 * - an aborted `signal` throws its reason; leaving the loop early (break/return) cancels the body.
 */
export async function* parseChatStream(
  body: ReadableStream<Uint8Array>,
  endpoint: string,
  signal?: AbortSignal,
): AsyncGenerator<ChatStreamEvent, void, undefined> {
  const events = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream({ onError: 'terminate' }));
  const reader = events.getReader();
  const chunks = new ChunkReader(endpoint);
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
        throw new CloudStreamError(endpoint, chunks.finished ? 'stream ended after its finish reason but before [DONE]' : 'stream ended before [DONE]');
      }
      const data = next.value.data;
      if (data.trim() === SSE_DONE) {
        done = true;
        chunks.end();
        return;
      }
      if (data.trim() === '') continue;
      const json = parseJson(data, endpoint);
      // `event: error` with a body that is not a provider error shape still carries the provider's words.
      if (next.value.event === 'error' && !providerError(json)) throw new ModelProviderError(endpoint, data.slice(0, 300));
      yield* chunks.read(json, data);
    }
  } finally {
    if (!done) await reader.cancel().catch(() => undefined);
    reader.releaseLock();
  }
}

/** The events of a whole (non-streamed) completion, or its provider error. */
export function* completionEvents(json: unknown, endpoint: string): Generator<ChatStreamEvent> {
  const chunks = new ChunkReader(endpoint);
  if (isObject(json) && !providerError(json) && !Array.isArray(json.choices)) {
    throw new CloudProtocolError(endpoint, `unexpected answer (no choices): ${JSON.stringify(json).slice(0, 120)}`);
  }
  yield* chunks.read(json, JSON.stringify(json));
  chunks.end();
}

/**
 * The events of a non-streamed request's answer, read whole before the first is given (a body that is
 * not JSON throws CloudProtocolError naming what it was).
 */
export async function wholeAnswerEvents(res: Response, endpoint: string): Promise<AsyncIterable<ChatStreamEvent>> {
  let json: unknown;
  try {
    json = await res.json();
  } catch {
    throw new CloudProtocolError(endpoint, `expected JSON, got ${res.headers.get('content-type') || 'no content type'}`);
  }
  const events = [...completionEvents(json, endpoint)];
  return (async function* () {
    yield* events;
  })();
}

/**
 * The events of the answer to a streaming request, whatever came back: an event stream, or a whole
 * JSON completion (a server that ignores `stream`), or a JSON error body with status 200. Anything
 * else throws CloudProtocolError.
 */
export async function* answerEvents(res: Response, endpoint: string, signal?: AbortSignal): AsyncGenerator<ChatStreamEvent, void, undefined> {
  const type = res.headers.get('content-type') ?? '';
  if (type.includes('text/event-stream') && res.body) {
    yield* parseChatStream(res.body, endpoint, signal);
    return;
  }
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    // A server that labels its event stream text/plain (or nothing) is still read as one.
    if (/^(data|:|event):/m.test(text)) {
      yield* parseChatStream(new Response(text).body!, endpoint, signal);
      return;
    }
    throw new CloudProtocolError(endpoint, `expected an event stream or JSON, got ${type || 'no content type'}: ${text.slice(0, 120)}`);
  }
  yield* completionEvents(json, endpoint);
}

/** What a whole stream amounts to: choice 0's text and tool calls, its finish reason, and the usage. */
export interface CollectedChat {
  id?: string;
  model?: string;
  content: string;
  reasoning?: string;
  toolCalls: ToolCall[];
  finishReason?: string;
  usage?: Usage;
}

/** Folds normalised tool-call fragments by `index`: id/name set once, `arguments` concatenated, metadata merged. */
export function mergeToolCallDeltas(into: ToolCall[], deltas: StreamToolDelta[]): void {
  for (const d of deltas) {
    const call = (into[d.index] ??= { id: '', type: 'function', function: { name: '', arguments: '' } });
    if (d.id && !call.id) call.id = d.id;
    if (d.function?.name && !call.function.name) call.function.name = d.function.name;
    if (d.function?.arguments) call.function.arguments += d.function.arguments;
    if (d.extra_content) call.extra_content = { ...((call.extra_content as object | undefined) ?? {}), ...d.extra_content };
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
    if (ev.reasoning) out.reasoning = (out.reasoning ?? '') + ev.reasoning;
    if (ev.toolCalls) mergeToolCallDeltas(out.toolCalls, ev.toolCalls);
    if (ev.finishReason) out.finishReason = ev.finishReason;
  }
  out.toolCalls = out.toolCalls.filter(Boolean);
  return out;
}
