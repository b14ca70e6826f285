// MultiLLM: several models behind one plugin: race them for the first valid answer, or try them in order.
import { CortexError, describeError } from '../../errors.js';
import { MultiLlmOptions } from '../../plugins/schemas/llms.js';
import type { AnswerObserver, LlmAnswer, LlmFactory, LlmPlugin, LlmRequest } from '../llm.js';
import { chatPlugin, type ChatLlm, withTimeout } from './chat-plugin.js';
import { createCloudLlm } from './cloud-llm.js';
import { createLocalLlm } from './local-llm.js';

export { MultiLlmOptions };

/** Every member failed or answered nothing usable; `failures` says why, one line per model. */
export class MultiLlmError extends CortexError {
  readonly failures: string[];
  constructor(failures: string[]) {
    super('llm_all_failed', `no model gave a valid answer: ${failures.join('; ')}`);
    this.name = 'MultiLlmError';
    this.failures = failures;
  }
}

/**
 * Why an answer is not usable, or undefined when it is: it must say something or call a tool, and every
 * tool it calls must be one of the request's tools with object arguments.
 */
export function invalidReason(answer: LlmAnswer, request: LlmRequest): string | undefined {
  if (!answer.text?.trim() && answer.toolCalls.length === 0) return 'empty answer';
  if (request.tools.length) {
    const names = new Set(request.tools.map((t) => t.function.name));
    for (const call of answer.toolCalls) {
      if (!names.has(call.name)) return `unknown tool ${call.name}`;
      if (!call.arguments || typeof call.arguments !== 'object') return `arguments of ${call.name} are not a JSON object`;
    }
  }
  return undefined;
}

interface Member {
  label: string;
  plugin: LlmPlugin;
  timeoutMs: number;
}

/** A member answered, with nothing to say and no tool to call: another member may still have something. */
class EmptyAnswer extends CortexError {
  constructor(readonly answer: LlmAnswer) {
    super('llm_invalid_answer', 'empty answer');
  }
}

async function askMember(member: Member, request: LlmRequest, signal: AbortSignal, observer?: AnswerObserver): Promise<LlmAnswer> {
  const answer = await withTimeout(member.label, member.timeoutMs, signal, (s) => member.plugin.ask(request, s, observer));
  const reason = invalidReason(answer, request);
  if (reason === 'empty answer') throw new EmptyAnswer(answer);
  if (reason) throw new CortexError('llm_invalid_answer', reason);
  return answer;
}

/**
 * When every member answered and none had anything to say (a quiet room, nothing to do), that is the
 * answer, not a failure: the first member's empty answer. Undefined when any member failed otherwise.
 */
function agreedNothing(errors: unknown[], members: number): LlmAnswer | undefined {
  if (errors.length !== members || !errors.every((e) => e instanceof EmptyAnswer)) return undefined;
  return (errors[0] as EmptyAnswer).answer;
}

/**
 * Who may speak to the observer: the first member whose answer reaches it (text or a tool call) holds
 * it from then on; the other members' streams are not forwarded. Once a member's answer has reached
 * the observer (words may already be spoken), that member's outcome is the outcome, failure included.
 */
class StreamFloor {
  private holder: number | undefined;
  constructor(
    private readonly observer: AnswerObserver | undefined,
    private readonly onClaim: (member: number) => void = () => {},
  ) {}

  /** True when `member`'s answer has reached the observer. */
  heldBy(member: number): boolean {
    return this.holder === member;
  }

  /** The observer member `i` gets: events are forwarded once it holds the floor. */
  observerFor(i: number): AnswerObserver | undefined {
    const o = this.observer;
    if (!o) return undefined;
    const claim = () => {
      if (this.holder === undefined) {
        this.holder = i;
        this.onClaim(i);
      }
      return this.holder === i;
    };
    const mine = () => this.holder === i;
    return {
      requestSent: (at) => this.holder === undefined && o.requestSent?.(at),
      firstToken: (at) => mine() && o.firstToken?.(at),
      text: (f) => claim() && o.text?.(f),
      toolCallStarted: (index, name, id) => claim() && o.toolCallStarted?.(index, name, id),
      toolCallProgress: (index, partial) => mine() && o.toolCallProgress?.(index, partial),
      toolCallDone: (index, call) => mine() && o.toolCallDone?.(index, call),
    };
  }
}

/** Tries members in order; the first valid answer is returned (or, when every member answered empty, an empty one). A member whose answer already reached the observer is final. */
export async function fallback(members: Member[], request: LlmRequest, signal: AbortSignal, observer?: AnswerObserver): Promise<LlmAnswer> {
  const failures: string[] = [];
  const errors: unknown[] = [];
  const floor = new StreamFloor(observer);
  for (const [i, member] of members.entries()) {
    signal.throwIfAborted();
    try {
      return await askMember(member, request, signal, floor.observerFor(i));
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      failures.push(`${member.label}: ${describeError(err)}`);
      errors.push(err);
      if (floor.heldBy(i)) break;
    }
  }
  const nothing = agreedNothing(errors, members.length);
  if (nothing) return nothing;
  throw new MultiLlmError(failures);
}

/**
 * Asks all members at once; the first valid answer wins and the other calls are aborted. Streaming: the
 * first member whose answer starts arriving (text or a tool call) is streamed to the observer and the
 * others are aborted at once; its outcome is final.
 */
export function firstValid(members: Member[], request: LlmRequest, signal: AbortSignal, observer?: AnswerObserver): Promise<LlmAnswer> {
  return new Promise((resolve, reject) => {
    const controllers = members.map(() => new AbortController());
    const floor = new StreamFloor(observer, (winner) =>
      controllers.forEach((c, j) => j !== winner && c.abort(new CortexError('llm_race_lost', 'another model answered first'))),
    );
    const failures: string[] = new Array(members.length);
    const errors: unknown[] = [];
    let pending = members.length;
    let settled = false;
    const finish = () => {
      settled = true;
      signal.removeEventListener('abort', onAbort);
      for (const c of controllers) c.abort(new CortexError('llm_race_lost', 'another model answered first'));
    };
    const onAbort = () => {
      if (settled) return;
      finish();
      reject(signal.reason);
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    members.forEach((member, i) => {
      askMember(member, request, controllers[i]!.signal, floor.observerFor(i)).then(
        (answer) => {
          if (settled) return;
          finish();
          resolve(answer);
        },
        (err: unknown) => {
          failures[i] = `${member.label}: ${describeError(err)}`;
          errors.push(err);
          if (floor.heldBy(i) && !settled) {
            finish();
            reject(new MultiLlmError(failures.filter(Boolean)));
            return;
          }
          if (--pending === 0 && !settled) {
            finish();
            const nothing = agreedNothing(errors, members.length);
            if (nothing) resolve(nothing);
            else reject(new MultiLlmError(failures));
          }
        },
      );
    });
  });
}

/** The MultiLLM plugin (its descriptor is in src/plugins/llms.ts). */
export const createMultiLlm: LlmFactory = (config, ctx) => {
  const options = MultiLlmOptions.parse(config ?? {});
  const members: Member[] = options.models.map((m, i) => {
    const timeout = m.timeout_seconds ?? options.timeout_seconds;
    // Members keep no history (MultiLLM keeps it once) and get the per-model timeout.
    const memberConfig = { ...m.config, history_length: 0, timeout_seconds: timeout };
    const memberCtx = { logger: ctx.logger, cloud: ctx.cloud };
    const plugin = m.type === 'CloudLLM' ? createCloudLlm(memberConfig, memberCtx) : createLocalLlm(memberConfig, memberCtx);
    return { label: `#${i} ${m.type} ${m.config.model}`, plugin, timeoutMs: timeout * 1000 };
  });
  const total = options.strategy === 'fallback' ? members.reduce((s, m) => s + m.timeoutMs, 0) : Math.max(...members.map((m) => m.timeoutMs));
  const plugin: ChatLlm = chatPlugin({
    type: 'MultiLLM',
    label: `MultiLLM ${options.strategy}`,
    // A bound above the members' own timeouts, so it only fires if a member ignores its signal.
    timeoutMs: total + 1000,
    historyLength: options.history_length,
    historyFile: options.persist_history ? ctx.historyFile : undefined,
    logger: ctx.logger,
    complete: (request, signal, observer) =>
      options.strategy === 'fallback' ? fallback(members, request, signal, observer) : firstValid(members, request, signal, observer),
  });
  return {
    ...plugin,
    stop() {
      plugin.stop();
      for (const m of members) m.plugin.stop?.();
    },
  };
};
