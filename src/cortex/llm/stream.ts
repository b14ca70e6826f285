// Assembles a streamed chat completion into an answer while telling an observer what arrived: first token, text, tool calls as their arguments complete.
import type { ChatStreamEvent } from '../../cloud/sse.js';
import type { Usage } from '../../cloud/protocol.js';
import type { AnswerObserver, LlmAnswer, LlmToolCall } from '../llm.js';
import { IncrementalJson } from './partial-json.js';

interface CallState {
  id?: string;
  extra?: Record<string, unknown>;
  name: string;
  raw: string;
  parser: IncrementalJson;
  started: boolean;
  done: boolean;
}

/** The arguments of a finished call as the non-streamed path has them: parsed JSON, else the raw text. */
function finalArguments(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    // Kept as the raw string: the action's schema rejects it with a clear message.
    return raw;
  }
}

/**
 * Folds the events of choice 0 into one answer. Guarantees to the observer: `firstToken` once, at the
 * first text or tool-call fragment; `toolCallStarted` once per call when its name is known;
 * `toolCallProgress` after each fragment that changed the parsed arguments; `toolCallDone` once per
 * call, as soon as its arguments are a complete JSON value (so a `move` is dispatched while a later
 * `speak` is still being written), or at `finish()` for arguments that never completed (they are
 * then the raw text, as in the non-streamed path). An observer that throws does not break the stream.
 */
export class AnswerAssembler {
  private readonly calls: CallState[] = [];
  private text = '';
  private reasoning = '';
  private first = false;
  private usage: Usage | undefined;
  model: string | undefined;

  constructor(
    private readonly observer: AnswerObserver | undefined,
    private readonly now: () => number = Date.now,
    private readonly onObserverError: (err: unknown) => void = () => {},
  ) {}

  private tell<K extends keyof AnswerObserver>(key: K, ...args: Parameters<NonNullable<AnswerObserver[K]>>): void {
    const fn = this.observer?.[key] as ((...a: unknown[]) => void) | undefined;
    if (!fn) return;
    try {
      fn.apply(this.observer, args);
    } catch (err) {
      this.onObserverError(err);
    }
  }

  private token(): void {
    if (this.first) return;
    this.first = true;
    this.tell('firstToken', this.now());
  }

  push(ev: ChatStreamEvent): void {
    if (ev.kind === 'usage') {
      this.usage = ev.usage;
      return;
    }
    this.model ??= ev.chunk.model;
    if (ev.index !== 0) return;
    // Thoughts (`reasoning_content` / `reasoning`) are kept apart: never text, never spoken.
    if (ev.reasoning) this.reasoning += ev.reasoning;
    if (ev.content) {
      this.token();
      this.text += ev.content;
      this.tell('text', ev.content);
    }
    for (const d of ev.toolCalls ?? []) {
      const call = (this.calls[d.index] ??= { name: '', raw: '', parser: new IncrementalJson(), started: false, done: false });
      if (d.id && !call.id) call.id = d.id;
      if (d.function?.name && !call.name) call.name = d.function.name;
      if (d.extra_content) call.extra = { ...call.extra, ...d.extra_content };
      const fragment = d.function?.arguments ?? '';
      if (fragment || call.name) this.token();
      if (call.name && !call.started) {
        call.started = true;
        this.tell('toolCallStarted', d.index, call.name, call.id);
      }
      if (!fragment || call.done) continue;
      call.raw += fragment;
      call.parser.push(fragment);
      if (!call.parser.error && call.parser.value !== undefined && call.started) this.tell('toolCallProgress', d.index, call.parser.value);
      if (call.parser.done && call.started) this.complete(d.index, call);
    }
  }

  private complete(index: number, call: CallState): void {
    if (call.done) return;
    call.done = true;
    this.tell('toolCallDone', index, this.toolCall(call));
  }

  private toolCall(call: CallState): LlmToolCall {
    return { ...(call.id ? { id: call.id } : {}), name: call.name, arguments: finalArguments(call.raw), ...(call.extra ? { extra: call.extra } : {}) };
  }

  /** The stream ended well: completes the calls still open and returns the answer. */
  finish(startedAt: number, fallbackModel: string): LlmAnswer {
    this.calls.forEach((call, index) => {
      if (!call || call.done || !call.name) return;
      if (!call.started) {
        call.started = true;
        this.tell('toolCallStarted', index, call.name, call.id);
      }
      this.complete(index, call);
    });
    const toolCalls = this.calls.filter((c): c is CallState => Boolean(c?.name)).map((c) => this.toolCall(c));
    return {
      ...(this.text ? { text: this.text } : {}),
      ...(this.reasoning ? { reasoning: this.reasoning } : {}),
      toolCalls,
      ...(this.usage ? { usage: this.usage } : {}),
      model: this.model ?? fallbackModel,
      latencyMs: this.now() - startedAt,
      streamed: true,
    };
  }
}

/** Reads a whole event stream through an assembler. */
export async function assemble(
  events: AsyncIterable<ChatStreamEvent>,
  observer: AnswerObserver | undefined,
  startedAt: number,
  fallbackModel: string,
  onObserverError?: (err: unknown) => void,
): Promise<LlmAnswer> {
  const a = new AnswerAssembler(observer, Date.now, onObserverError);
  for await (const ev of events) a.push(ev);
  return a.finish(startedAt, fallbackModel);
}
