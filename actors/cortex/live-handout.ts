// Hands out a streamed answer while it arrives: speak sentences to synthesis one by one, other tool calls as soon as their arguments are complete.
import type { Logger } from 'pino';
import type { ActionHandle, McpHub } from '../../src/cortex/contracts.js';
import type { ModelProgressStage } from '../../src/cortex/events.js';
import type { AnswerObserver, LlmToolCall } from '../../src/cortex/llm.js';
import { SentenceSplitter } from '../../src/cortex/llm/sentences.js';
import { actionForTool } from '../../src/cortex/tools.js';
import { describeError } from '../../src/errors.js';
import type { Turn } from './turn.js';

/** The result of an MCP tool called while the answer was still streaming. */
export interface EarlyToolResult {
  id: string;
  name: string;
  args: unknown;
  content: string;
  ok: boolean;
}

export interface LiveHandoutDeps {
  handles: readonly ActionHandle[];
  speak: ActionHandle | undefined;
  hub?: McpHub | undefined;
  turn: Turn;
  logger: Logger;
  /** Gives one sentence to the speak action (through the turn, which tracks it). */
  say: (sentence: string) => void;
  /** Dispatches an action tool call (the tick records it for the interaction log). */
  dispatch: (handle: ActionHandle, value: unknown) => void;
  /** Aborts MCP calls with the tick. */
  signal: AbortSignal;
  tick: number;
  /**
   * Told that the answer is arriving (the tick puts it on the bus as `model.progress`): the first token,
   * then once per batch of complete sentences and once per complete tool call, never per token.
   */
  progress?: (stage: ModelProgressStage) => void;
}

/**
 * The observer a tick gives a streaming model. Guarantees:
 * - the `speak` call's `sentence` is cut into sentences as it grows (SentenceSplitter on the partial
 *   argument); each complete one goes to the speak action at once, so the first sentence is being
 *   synthesised and played while the model still writes the rest;
 * - any other action's call is dispatched the moment its arguments are a complete JSON value, and an
 *   MCP tool is called then (its result waits for the next round);
 * - calls handled here are listed in `handled` (by index), so the tick hands out only the others at the
 *   end (unknown tools, arguments that never became JSON); after a barge-in nothing more is handed out;
 * - `progress` hears of the first token, of each batch of complete sentences (of the speak call, or of
 *   plain text) and of each other tool call complete, before that call is dispatched: a listener (the
 *   safety governor) knows the model is answering before the answer's first motion command arrives.
 */
export class LiveHandout implements AnswerObserver {
  readonly handled = new Set<number>();
  readonly early: Array<Promise<EarlyToolResult>> = [];
  /** Labels of the actions this answer dispatched (the turn's `first action started`). */
  readonly dispatched = new Set<string>();
  private readonly splitters = new Map<number, SentenceSplitter>();
  /** Sentences of plain text, only counted (plain text is spoken when the answer is complete). */
  private readonly textSentences = new SentenceSplitter();
  private textSoFar = '';
  private started = false;

  constructor(private readonly deps: LiveHandoutDeps) {}

  private get stopped(): boolean {
    return this.deps.turn.isInterrupted;
  }

  requestSent(at: number): void {
    this.deps.turn.mark('request_sent', at);
  }

  firstToken(at: number): void {
    this.deps.turn.streamed = true;
    this.deps.turn.mark('first_token', at);
    if (this.started) return;
    this.started = true;
    this.deps.progress?.('first_token');
  }

  text(fragment: string): void {
    if (!this.deps.progress) return;
    this.textSoFar += fragment;
    if (this.textSentences.update(this.textSoFar).length) this.deps.progress('sentence');
  }

  /** Gives sentences to the speak action; one progress report for the batch. */
  private sayAll(sentences: string[]): void {
    for (const s of sentences) this.deps.say(s);
    if (sentences.length) this.deps.progress?.('sentence');
  }

  toolCallStarted(index: number, name: string): void {
    const handle = actionForTool(this.deps.handles, name);
    if (handle && handle === this.deps.speak) this.splitters.set(index, new SentenceSplitter());
  }

  toolCallProgress(index: number, partial: unknown): void {
    const splitter = this.splitters.get(index);
    const sentence = (partial as { sentence?: unknown } | undefined)?.sentence;
    if (!splitter || typeof sentence !== 'string' || this.stopped) return;
    this.sayAll(splitter.update(sentence));
  }

  toolCallDone(index: number, call: LlmToolCall): void {
    const splitter = this.splitters.get(index);
    // Before anything is dispatched: the model is alive whatever becomes of the call.
    if (!splitter) this.deps.progress?.('tool_call');
    if (this.stopped) return void this.handled.add(index);
    if (splitter) {
      const sentence = (call.arguments as { sentence?: unknown } | undefined)?.sentence;
      // Arguments that are not a speak value are left to the tick, whose action reports them invalid.
      if (typeof sentence !== 'string' || !sentence.trim()) return;
      this.sayAll(splitter.update(sentence, true));
      this.handled.add(index);
      return;
    }
    const handle = actionForTool(this.deps.handles, call.name);
    if (handle) {
      this.dispatched.add(handle.entry.llm_label);
      this.deps.turn.watchActions(() => this.dispatched);
      this.deps.dispatch(handle, call.arguments);
      this.handled.add(index);
      return;
    }
    const hub = this.deps.hub;
    if (hub?.has(call.name)) {
      const id = call.id ?? `call_${this.deps.tick}_${index}`;
      this.early.push(
        hub.call(call.name, call.arguments, this.deps.signal).then(
          (content) => ({ id, name: call.name, args: call.arguments, content, ok: true }),
          (err: unknown) => ({ id, name: call.name, args: call.arguments, content: `error: ${describeError(err)}`, ok: false }),
        ),
      );
      this.handled.add(index);
    }
  }
}
