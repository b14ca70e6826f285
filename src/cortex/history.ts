// Conversation history of a model plugin: the last N exchanges verbatim, older ones summarised in batches of N in the background, or dropped.
import type { Logger } from 'pino';
import { describeError } from '../errors.js';
import type { ChatMessage } from '../cloud/protocol.js';
import type { LlmAnswer } from './llm.js';

/** One prompt and the model's answer to it. */
export interface Exchange {
  prompt: string;
  answer: string;
}

/** Asks the same model for a summary; must honour `signal`. */
export type Summariser = (text: string, signal: AbortSignal) => Promise<string>;

export interface HistoryOptions {
  /** Exchanges kept verbatim (`history_length`); 0 keeps nothing and never summarises. */
  length: number;
  /** When absent (or when it fails), exchanges that leave the window are dropped. */
  summarise?: Summariser;
  /** Longest summary kept, in characters (a runaway model cannot grow the prompt without bound). */
  maxSummaryChars?: number;
  /** Most exchanges waiting for a summary; older ones are dropped first. */
  maxPending?: number;
  logger?: Logger;
  /** Called after every change of what is remembered (the plugin saves the history then). */
  onChange?: (history: ConversationHistory) => void;
}

export const SUMMARY_INSTRUCTION =
  'Summarise the conversation below between a robot and the people around it in at most five short sentences. ' +
  'Keep names, requests, promises and facts about the place; leave out greetings. Answer with the summary only.';

/** How an answer is remembered: its text and the tools it called (as plain text, so no tool results are needed). */
export function answerText(answer: Pick<LlmAnswer, 'text' | 'toolCalls'>): string {
  const calls = answer.toolCalls.map((c) => `[${c.name} ${JSON.stringify(c.arguments)}]`);
  return [answer.text ?? '', ...calls].filter((s) => s.length > 0).join(' ') || '(no answer)';
}

/** What a history looks like on disk and after a restart: the summary, then the exchanges, oldest first. */
export interface HistorySnapshot {
  summary: string;
  exchanges: Exchange[];
}

/**
 * Keeps the last `length` exchanges verbatim (the window). An exchange pushed out of the window joins
 * the pending batch, which is still sent verbatim, so the model never loses sight of it; once
 * `length` exchanges wait, one background summary folds them (and the previous summary) into a new
 * summary. So at most one summary request is made per `length` answers (model calls per answer stay at
 * or below 1 + 1/length), and a prompt carries between `length` and 2 x `length` - 1 verbatim
 * exchanges. One summary runs at a time; `messages()` never waits for it (the batch in flight is sent
 * verbatim until its summary lands). A failed summary drops its batch (truncation) and keeps the
 * previous summary; without a summariser, exchanges leaving the window are dropped. `stop()` aborts a
 * summary in flight. `onChange` is called after every change (persistence).
 */
export class ConversationHistory {
  private readonly options: Required<Omit<HistoryOptions, 'summarise' | 'logger' | 'onChange'>> & Pick<HistoryOptions, 'summarise' | 'logger' | 'onChange'>;
  private readonly window: Exchange[] = [];
  private pending: Exchange[] = [];
  /** The batch being summarised now, still sent verbatim until its summary lands. */
  private summarising: Exchange[] = [];
  private summaryText = '';
  private inFlight: AbortController | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Exchanges dropped without a summary (summariser absent or failed, or the pending batch overflowed). */
  dropped = 0;
  /** Summary requests made. */
  summaries = 0;

  constructor(options: HistoryOptions) {
    this.options = { maxSummaryChars: 2000, maxPending: 50, ...options };
  }

  get summary(): string {
    return this.summaryText;
  }

  get exchanges(): readonly Exchange[] {
    return this.window;
  }

  /** Everything remembered, oldest first, for persistence. */
  snapshot(): HistorySnapshot {
    return { summary: this.summaryText, exchanges: [...this.summarising, ...this.pending, ...this.window].map((e) => ({ ...e })) };
  }

  /** Takes back a snapshot (at start): the newest `length` exchanges form the window, older ones wait for a summary. */
  restore(snapshot: HistorySnapshot): void {
    if (this.options.length === 0) return;
    this.summaryText = snapshot.summary.slice(0, this.options.maxSummaryChars);
    const all = snapshot.exchanges.slice(-(this.options.length * 2 - 1));
    const cut = Math.max(0, all.length - this.options.length);
    this.pending = all.slice(0, cut);
    this.window.splice(0, this.window.length, ...all.slice(cut));
    this.maybeSummarise();
  }

  /** The remembered conversation as chat messages, to go between the system prompt and the new prompt. */
  messages(): ChatMessage[] {
    const out: ChatMessage[] = [];
    if (this.summaryText) out.push({ role: 'system', content: `Summary of the earlier conversation: ${this.summaryText}` });
    for (const e of [...this.summarising, ...this.pending, ...this.window]) {
      out.push({ role: 'user', content: e.prompt });
      out.push({ role: 'assistant', content: e.answer });
    }
    return out;
  }

  record(prompt: string, answer: string): void {
    if (this.options.length === 0 || this.stopped) return;
    this.window.push({ prompt, answer });
    while (this.window.length > this.options.length) this.pending.push(this.window.shift()!);
    if (this.pending.length > this.options.maxPending) {
      const extra = this.pending.length - this.options.maxPending;
      this.pending.splice(0, extra);
      this.dropped += extra;
    }
    if (!this.options.summarise && this.pending.length) {
      this.dropped += this.pending.length;
      this.pending = [];
    }
    this.changed();
    this.maybeSummarise();
  }

  /** Appends to the answer of the last exchange when its prompt is `prompt`; false when it is not. */
  amendLast(prompt: string, more: string): boolean {
    const last = this.window.at(-1);
    if (!last || last.prompt !== prompt) return false;
    last.answer = `${last.answer} ${more}`;
    this.changed();
    return true;
  }

  /**
   * Replaces the answer of the newest exchange whose prompt is `prompt` (what was actually said of it);
   * an answer cut short while it arrived was never recorded, so it is recorded now.
   */
  reviseAnswer(prompt: string, answer: string): void {
    for (const list of [this.window, this.pending]) {
      for (let i = list.length - 1; i >= 0; i--) {
        if (list[i]!.prompt === prompt) {
          list[i]!.answer = answer;
          this.changed();
          return;
        }
      }
    }
    this.record(prompt, answer);
  }

  /** Resolves when no summary is running (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    this.inFlight?.abort(new Error('history stopped'));
  }

  private changed(): void {
    if (this.stopped) return;
    try {
      this.options.onChange?.(this);
    } catch (err) {
      this.options.logger?.warn(`history not saved: ${describeError(err)}`);
    }
  }

  private maybeSummarise(): void {
    if (this.running || this.stopped || !this.options.summarise || this.pending.length < this.options.length) return;
    this.running = this.summariseLoop().finally(() => {
      this.running = undefined;
    });
  }

  private async summariseLoop(): Promise<void> {
    while (this.pending.length >= this.options.length && !this.stopped) {
      const batch = this.pending.splice(0, this.options.length);
      this.summarising = batch;
      const text = [this.summaryText ? `Earlier summary: ${this.summaryText}` : '', ...batch.map((e) => `Prompt: ${e.prompt}\nRobot: ${e.answer}`)]
        .filter(Boolean)
        .join('\n\n');
      this.inFlight = new AbortController();
      this.summaries += 1;
      try {
        const summary = (await this.options.summarise!(text, this.inFlight.signal)).trim();
        if (!summary) throw new Error('empty summary');
        if (!this.stopped) this.summaryText = summary.slice(0, this.options.maxSummaryChars);
      } catch (err) {
        this.dropped += batch.length;
        if (!this.stopped) this.options.logger?.warn(`history summary failed, ${batch.length} exchange(s) dropped: ${describeError(err)}`);
      } finally {
        this.inFlight = undefined;
        this.summarising = [];
      }
      this.changed();
    }
  }
}

/**
 * The request a plugin sends: the system messages of the request, then the remembered conversation,
 * then the rest (the new prompt). The prompt recorded afterwards is the last user message.
 */
export function withHistory(messages: ChatMessage[], history: ConversationHistory | undefined): ChatMessage[] {
  if (!history) return messages;
  const firstNonSystem = messages.findIndex((m) => m.role !== 'system');
  const at = firstNonSystem < 0 ? messages.length : firstNonSystem;
  return [...messages.slice(0, at), ...history.messages(), ...messages.slice(at)];
}

/** The last user message of a request (what gets remembered as the prompt). */
export function lastPrompt(messages: ChatMessage[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role === 'user') return m.content;
  }
  return undefined;
}
