// Conversation history of a model plugin: the last N exchanges verbatim, older ones summarised in the background or dropped.
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
}

export const SUMMARY_INSTRUCTION =
  'Summarise the conversation below between a robot and the people around it in at most five short sentences. ' +
  'Keep names, requests, promises and facts about the place; leave out greetings. Answer with the summary only.';

/** How an answer is remembered: its text and the tools it called (as plain text, so no tool results are needed). */
export function answerText(answer: Pick<LlmAnswer, 'text' | 'toolCalls'>): string {
  const calls = answer.toolCalls.map((c) => `[${c.name} ${JSON.stringify(c.arguments)}]`);
  return [answer.text ?? '', ...calls].filter((s) => s.length > 0).join(' ') || '(no answer)';
}

/**
 * Keeps the last `length` exchanges. An exchange pushed out of the window joins the pending batch; one
 * background summary runs at a time, merging the previous summary with the batch. `messages()` never
 * waits for it: a tick sees the summary as it stands. A failed summary drops the batch (truncation) and
 * keeps the previous summary. `stop()` aborts a summary in flight.
 */
export class ConversationHistory {
  private readonly options: Required<Omit<HistoryOptions, 'summarise' | 'logger'>> & Pick<HistoryOptions, 'summarise' | 'logger'>;
  private readonly window: Exchange[] = [];
  private pending: Exchange[] = [];
  private summaryText = '';
  private inFlight: AbortController | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Exchanges dropped without a summary (summariser absent or failed, or the pending batch overflowed). */
  dropped = 0;

  constructor(options: HistoryOptions) {
    this.options = { maxSummaryChars: 2000, maxPending: 50, ...options };
  }

  get summary(): string {
    return this.summaryText;
  }

  get exchanges(): readonly Exchange[] {
    return this.window;
  }

  /** The remembered conversation as chat messages, to go between the system prompt and the new prompt. */
  messages(): ChatMessage[] {
    const out: ChatMessage[] = [];
    if (this.summaryText) out.push({ role: 'system', content: `Summary of the earlier conversation: ${this.summaryText}` });
    for (const e of this.window) {
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
    if (this.pending.length) this.kick();
  }

  /** Appends to the answer of the last exchange when its prompt is `prompt`; false when it is not. */
  amendLast(prompt: string, more: string): boolean {
    const last = this.window.at(-1);
    if (!last || last.prompt !== prompt) return false;
    last.answer = `${last.answer} ${more}`;
    return true;
  }

  /** Resolves when no summary is running (tests and shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    this.inFlight?.abort(new Error('history stopped'));
  }

  private kick(): void {
    if (this.running) return;
    if (!this.options.summarise) {
      this.dropped += this.pending.length;
      this.pending = [];
      return;
    }
    this.running = this.summariseLoop().finally(() => {
      this.running = undefined;
    });
  }

  private async summariseLoop(): Promise<void> {
    while (this.pending.length && !this.stopped) {
      const batch = this.pending;
      this.pending = [];
      const text = [
        this.summaryText ? `Earlier summary: ${this.summaryText}` : '',
        ...batch.map((e) => `Prompt: ${e.prompt}\nRobot: ${e.answer}`),
      ]
        .filter(Boolean)
        .join('\n\n');
      this.inFlight = new AbortController();
      try {
        const summary = (await this.options.summarise!(text, this.inFlight.signal)).trim();
        if (!summary) throw new Error('empty summary');
        if (!this.stopped) this.summaryText = summary.slice(0, this.options.maxSummaryChars);
      } catch (err) {
        this.dropped += batch.length;
        if (!this.stopped) this.options.logger?.warn(`history summary failed, ${batch.length} exchange(s) dropped: ${describeError(err)}`);
      } finally {
        this.inFlight = undefined;
      }
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
