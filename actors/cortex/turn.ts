// One voice turn of a tick: its latency stages, the sentences it speaks and what became of them, reported once as a `turn` event.
import { setMaxListeners } from 'node:events';
import type { Logger } from 'pino';
import type { AgentBus, TurnStage } from '../../src/cortex/events.js';
import { TURN_STAGES } from '../../src/cortex/events.js';
import type { ActionHandle } from '../../src/cortex/contracts.js';
import type { CommandMark } from '../../src/cortex/action.js';
import { describeError } from '../../src/errors.js';
import { ActionError } from '../actions/action.js';

/** What became of one sentence the turn gave to the speak action. */
interface Sentence {
  text: string;
  state: 'queued' | 'done' | 'failed' | 'interrupted' | 'dropped';
  playbackStart?: number;
  playbackEnd?: number;
  settled: Promise<void>;
}

export interface TurnOptions {
  bus: AgentBus;
  logger: Logger;
  mode: string;
  tick: number;
  /** Cancels the turn's sentences: the mode's lifetime (aborted when it starts exiting or the agent stops). */
  lifetime: AbortSignal;
  /** Stages known before the tick (end of speech, final transcript), ms since the epoch. */
  before?: Partial<Record<TurnStage, number>>;
  /** Hears the barge-in when `interrupted` aborts (the tick stops its model stream without a listener of its own). */
  onInterrupted?: (reason: unknown) => void;
  now?: () => number;
}

/**
 * Records the stages of one turn (first occurrence of each), speaks its sentences through the speak
 * action (each a command of its own, so synthesis of the next overlaps playback of this one), and
 * notices a barge-in: a sentence interrupted or dropped while the turn's lifetime is still on means
 * someone stopped the robot's speech, so `interrupted` aborts (the model stream listens to it) and
 * nothing more of this answer is said. `finish()` waits for every sentence to settle, then emits the
 * `turn` event with the stages in ms from the origin (end of speech, else the final transcript, else
 * the request) and returns what was actually said.
 */
export class Turn {
  readonly stages: Partial<Record<TurnStage, number>> = {};
  private readonly sentences: Sentence[] = [];
  /** Aborted on barge-in: the model stream and the rest of the answer stop. */
  readonly interrupted = new AbortController();
  /** The same as `interrupted.signal.aborted`, without making the signal (Node makes it on first read, at about 3 us). */
  private barged = false;
  private readonly now: () => number;
  private actionWatch: { unsubscribe(): void } | undefined;
  private finished = false;
  streamed = false;
  model = '';

  constructor(private readonly options: TurnOptions) {
    this.now = options.now ?? Date.now;
    // Each queued sentence listens to the mode's lifetime until it settles; a long answer has many.
    setMaxListeners(1000, options.lifetime);
    for (const [k, v] of Object.entries(options.before ?? {})) if (typeof v === 'number') this.stages[k as TurnStage] = v;
  }

  /** A barge-in stopped this turn (`interrupted` aborted). */
  get isInterrupted(): boolean {
    return this.barged;
  }

  mark(stage: TurnStage, at: number = this.now()): void {
    this.stages[stage] ??= at;
  }

  /** Sentences given to the speak action so far. */
  get spokenCount(): number {
    return this.sentences.length;
  }

  /** Gives one sentence to the speak action, unless the turn was interrupted. */
  speak(handle: ActionHandle, sentence: string): void {
    const text = sentence.trim();
    if (!text || this.barged || this.options.lifetime.aborted) return;
    this.mark('first_sentence');
    const entry: Sentence = { text, state: 'queued', settled: Promise.resolve() };
    const mark = (m: CommandMark, at: number) => {
      if (m === 'tts_first_byte') this.mark('first_audio_byte', at);
      else if (m === 'playback_start') {
        this.mark('playback_start', at);
        entry.playbackStart ??= at;
      } else entry.playbackEnd = at;
    };
    entry.settled = handle.run({ sentence: text }, this.options.lifetime, { origin: 'model', mark }).then(
      () => void (entry.state = 'done'),
      (err: unknown) => {
        entry.state = err instanceof ActionError ? err.state : 'failed';
        const stoppedByOwner = this.options.lifetime.aborted || (err instanceof ActionError && err.actionStopped);
        if ((entry.state === 'interrupted' || entry.state === 'dropped') && !stoppedByOwner && !this.barged) {
          const reason = new ActionError('interrupted', 'barge-in');
          this.barged = true;
          this.interrupted.abort(reason);
          this.options.onInterrupted?.(reason);
        }
        if (entry.state === 'failed') this.options.logger.warn(`a sentence was not spoken: ${describeError(err)}`);
      },
    );
    this.sentences.push(entry);
  }

  /** Watches for the first of these actions to start running (the `first action started` stage). */
  watchActions(labels: () => ReadonlySet<string>): void {
    if (this.actionWatch) return;
    this.actionWatch = this.options.bus.events$.subscribe((e) => {
      if (e.type === 'action' && e.state === 'running' && e.mode === this.options.mode && labels().has(e.label)) {
        this.mark('first_action', e.at);
        this.actionWatch?.unsubscribe();
      }
    });
  }

  /**
   * Once every sentence has settled: calls `settled` with the sentences said and not said (the
   * history is corrected there), then emits the `turn` event (once). `outcome` says how the model part ended.
   */
  async finish(
    outcome: 'answered' | 'error' | 'interrupted',
    settled?: (said: string[], unsaid: string[]) => void,
  ): Promise<{ said: string[]; unsaid: string[] }> {
    await Promise.all(this.sentences.map((s) => s.settled));
    this.actionWatch?.unsubscribe();
    const said = this.sentences.filter((s) => s.state === 'done').map((s) => s.text);
    const unsaid = this.sentences.filter((s) => s.state !== 'done').map((s) => s.text);
    if (this.finished) return { said, unsaid };
    this.finished = true;
    try {
      settled?.(said, unsaid);
    } catch (err) {
      this.options.logger.warn(`after the turn: ${describeError(err)}`);
    }
    const interrupted = this.barged || outcome === 'interrupted';
    const originStage = (['speech_end', 'final_transcript', 'request_sent'] as const).find((s) => this.stages[s] !== undefined);
    const origin = originStage ? this.stages[originStage]! : this.now();
    const stagesMs: Partial<Record<TurnStage, number>> = {};
    for (const stage of TURN_STAGES) {
      const at = this.stages[stage];
      if (at !== undefined) stagesMs[stage] = Math.max(0, at - origin);
    }
    const played = this.sentences.filter((s) => s.playbackStart !== undefined);
    const gaps: number[] = [];
    for (let i = 1; i < played.length; i++) {
      const prev = played[i - 1]!.playbackEnd;
      if (prev !== undefined) gaps.push(Math.max(0, played[i]!.playbackStart! - prev));
    }
    this.options.bus.emit({
      type: 'turn',
      at: this.now(),
      mode: this.options.mode,
      tick: this.options.tick,
      model: this.model,
      streamed: this.streamed,
      origin: originStage ?? 'request_sent',
      origin_at: origin,
      stages_ms: stagesMs,
      sentences: this.sentences.length,
      spoken: said.length,
      gaps_ms: gaps,
      outcome: interrupted ? 'interrupted' : outcome === 'error' ? 'error' : this.sentences.length ? 'spoken' : 'silent',
    });
    return { said, unsaid };
  }
}

export { TURN_STAGES };
