// Work on a voice turn done while the person still speaks: the prompt assembled on each partial transcript, optionally the model asked on it
// An answer asked for on a partial is kept only if the final transcript says the same.
import type { Logger } from 'pino';
import type { AnswerObserver, LlmAnswer, LlmPlugin, LlmRequest } from '../../src/cortex/llm.js';

/** A prompt and tools assembled for given input texts: `key` names those texts, so a tick with the same texts uses it as is. */
export interface AssembledTurn<P> {
  key: string;
  /** What the tick would have built (the fused prompt, its text, the tools). */
  value: P;
  request: LlmRequest;
}

type Recorded = { [K in keyof AnswerObserver]-?: [K, Parameters<NonNullable<AnswerObserver[K]>>] }[keyof AnswerObserver];

/** A model call started on a partial: its answer stream is recorded until a tick adopts it (replayed, then forwarded) or it is dropped. */
class EarlyCall {
  readonly controller = new AbortController();
  readonly answer: Promise<LlmAnswer>;
  readonly sentAt: number;
  private readonly recorded: Recorded[] = [];
  private target: AnswerObserver | undefined;

  constructor(llm: LlmPlugin, request: LlmRequest, now: number) {
    this.sentAt = now;
    const record =
      <K extends keyof AnswerObserver>(name: K) =>
      (...args: Parameters<NonNullable<AnswerObserver[K]>>) => {
        if (this.target) (this.target[name] as ((...a: unknown[]) => void) | undefined)?.(...args);
        else this.recorded.push([name, args] as Recorded);
      };
    const observer: AnswerObserver = {
      requestSent: record('requestSent'),
      firstToken: record('firstToken'),
      text: record('text'),
      toolCallStarted: record('toolCallStarted'),
      toolCallProgress: record('toolCallProgress'),
      toolCallDone: record('toolCallDone'),
    };
    this.answer = llm.ask(request, this.controller.signal, observer);
    this.answer.catch(() => undefined);
  }

  /** Hands what arrived so far to `observer`, then the rest as it comes; `signal` (the tick's) aborts the call. */
  adopt(observer: AnswerObserver, signal: AbortSignal): Promise<LlmAnswer> {
    for (const [name, args] of this.recorded.splice(0)) (observer[name] as ((...a: unknown[]) => void) | undefined)?.(...args);
    this.target = observer;
    if (signal.aborted) this.controller.abort(signal.reason);
    else signal.addEventListener('abort', () => this.controller.abort(signal.reason), { once: true });
    return this.answer;
  }
}

export interface TurnPreparerOptions<P> {
  /** The prompt and tools a tick would send if this input's buffer were `text` (undefined: the input cannot preview). */
  assemble: (inputId: string, text: string) => AssembledTurn<P> | undefined;
  /** The mode's model. */
  llm: LlmPlugin;
  /** Whether a partial of this input also sends the request (the input's `speculative` setting, off by default). */
  speculative: (inputId: string) => boolean;
  logger: Logger;
  now?: () => number;
}

/**
 * On each partial transcript of a voice input the turn's prompt is assembled (fuser, action
 * descriptions, tool schemas) so the tick that the final wakes finds it ready when the final says the
 * same; with the input's `speculative` setting, the request is also sent at once. A newer partial
 * replaces the previous preparation (its request aborted); the final's tick takes the preparation if
 * its prompt is exactly the one prepared, and drops it (aborting the request) otherwise. Each request
 * dropped is one extra model call, counted in `extraCalls`.
 */
export class TurnPreparer<P> {
  private prepared: (AssembledTurn<P> & { call?: EarlyCall }) | undefined;
  /** Requests sent on a partial and dropped (the final differed, or a newer partial came). */
  extraCalls = 0;
  /** Requests sent on a partial and adopted by the final's tick. */
  usedCalls = 0;
  private readonly now: () => number;

  constructor(private readonly opts: TurnPreparerOptions<P>) {
    this.now = opts.now ?? Date.now;
  }

  /** A partial transcript of input `inputId`. */
  partial(inputId: string, text: string): void {
    let assembled: AssembledTurn<P> | undefined;
    try {
      assembled = this.opts.assemble(inputId, text);
    } catch (err) {
      this.opts.logger.debug({ err }, 'prompt not prepared on a partial');
    }
    if (!assembled || assembled.key === this.prepared?.key) return;
    this.drop('a newer partial');
    const call = this.opts.speculative(inputId) ? new EarlyCall(this.opts.llm, assembled.request, this.now()) : undefined;
    this.prepared = { ...assembled, ...(call ? { call } : {}) };
  }

  /**
   * What was prepared for exactly these input texts (`key`), taken: its assembled prompt, and the
   * early request to adopt if one was sent. Anything prepared for other texts is dropped.
   */
  take(key: string): { value: P; adopt?: (observer: AnswerObserver, signal: AbortSignal) => Promise<LlmAnswer>; sentAt?: number } | undefined {
    const p = this.prepared;
    if (!p) return undefined;
    if (p.key !== key) {
      this.drop('the final differs');
      return undefined;
    }
    this.prepared = undefined;
    if (!p.call) return { value: p.value };
    this.usedCalls++;
    const call = p.call;
    return { value: p.value, adopt: (observer, signal) => call.adopt(observer, signal), sentAt: call.sentAt };
  }

  /** Drops what was prepared (a turn that will not use it); its early request is aborted and counted. */
  drop(why: string): void {
    const p = this.prepared;
    this.prepared = undefined;
    if (!p?.call) return;
    p.call.controller.abort(new Error(`speculative request dropped: ${why}`));
    this.extraCalls++;
    this.opts.logger.info({ extra_calls: this.extraCalls }, `speculative model request dropped (${why})`);
  }
}
