// What every chat-completions model plugin shares: per-call timeout, conversation history and its summaries by the same model.
import type { Logger } from 'pino';
import { CortexError } from '../../errors.js';
import type { ChatMessage } from '../../cloud/protocol.js';
import { answerText, ConversationHistory, lastPrompt, SUMMARY_INSTRUCTION, withHistory } from '../history.js';
import { CallMetadata } from '../history-calls.js';
import { HistoryPersister, loadHistory } from '../history-store.js';
import type { AnswerObserver, LlmAnswer, LlmPlugin, LlmRequest } from '../llm.js';
import type { ModelHealth } from './model-health.js';

/** A model call that timed out (the configured `timeout_seconds`), as opposed to one aborted by its owner. */
export class LlmTimeoutError extends CortexError {
  constructor(what: string, ms: number) {
    super('llm_timeout', `${what}: no answer within ${ms / 1000} s`);
    this.name = 'LlmTimeoutError';
  }
}

/** A model plugin the runtime owns: `stop()` aborts a background summary and forgets the conversation. */
export interface ChatLlm extends LlmPlugin {
  readonly history: ConversationHistory | undefined;
  stop(): void;
}

/**
 * Runs `call` with a signal that aborts when `signal` does or after `timeoutMs`; a timeout rejects with
 * LlmTimeoutError (so callers can tell it from their own abort). The timer is always cleared.
 */
export async function withTimeout<T>(what: string, timeoutMs: number, signal: AbortSignal, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  signal.throwIfAborted();
  const controller = new AbortController();
  const timeoutError = new LlmTimeoutError(what, timeoutMs);
  const timer = setTimeout(() => controller.abort(timeoutError), timeoutMs);
  const onAbort = () => controller.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await call(controller.signal);
  } catch (err) {
    if (controller.signal.reason === timeoutError) throw timeoutError;
    throw err;
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}

export interface ChatPluginOptions {
  type: string;
  /** Label in errors and logs, e.g. `CloudLLM provider_a/gen-4o-mini`. */
  label: string;
  timeoutMs: number;
  historyLength: number;
  logger: Logger;
  /** Where the history is kept across restarts; absent, it is not kept. */
  historyFile?: string | undefined;
  /** Counts the plugin's failed and answered calls (a model that keeps failing is reported). */
  health?: ModelHealth;
  /** One raw call of the model with these messages and tools; a streaming one reports to `observer`. */
  complete: (request: LlmRequest, signal: AbortSignal, observer?: AnswerObserver) => Promise<LlmAnswer>;
}

/**
 * Wraps a raw `complete` into a plugin: the remembered conversation goes after the system messages, each
 * call has the timeout, and each answered prompt is recorded. A follow-up round of the same tick (the
 * request carries `tool` results) amends the last exchange instead of adding one.
 */
export function chatPlugin(options: ChatPluginOptions): ChatLlm {
  const summariseWith = (instruction: string, text: string, signal: AbortSignal) =>
    withTimeout(`${options.label} summary`, options.timeoutMs, signal, (s) =>
      options.complete(
        {
          messages: [
            { role: 'system', content: instruction },
            { role: 'user', content: text },
          ],
          tools: [],
        },
        s,
      ),
    ).then((a) => a.text ?? '');
  const summarise = (text: string, signal: AbortSignal) => summariseWith(SUMMARY_INSTRUCTION, text, signal);
  const persister = options.historyFile && options.historyLength > 0 ? new HistoryPersister(options.historyFile, options.logger) : undefined;
  const history =
    options.historyLength > 0
      ? new ConversationHistory({
          length: options.historyLength,
          summarise,
          logger: options.logger,
          ...(persister ? { onChange: (h: ConversationHistory) => persister.save(h.snapshot()) } : {}),
        })
      : undefined;
  if (history && options.historyFile) {
    const saved = loadHistory(options.historyFile, options.logger);
    if (saved) history.restore(saved);
  }

  const calls = new CallMetadata();

  return {
    type: options.type,
    history,
    async ask(request, signal, observer) {
      // Tool calls of this session go back with the metadata their provider gave them (thought signatures).
      const messages: ChatMessage[] = calls.restore(withHistory(request.messages, history));
      let answer: LlmAnswer;
      try {
        answer = await withTimeout(options.label, options.timeoutMs, signal, (s) => options.complete({ messages, tools: request.tools }, s, observer));
      } catch (err) {
        if (!signal.aborted) options.health?.failed(err);
        throw err;
      }
      options.health?.answered();
      if (answer.reasoning) options.logger.debug({ model: options.label, reasoning: answer.reasoning.slice(0, 2000) }, 'the model thought (not said)');
      calls.remember(answer.toolCalls);
      const prompt = lastPrompt(request.messages);
      if (history && prompt !== undefined) {
        const isFollowUp = request.messages.some((m) => m.role === 'tool');
        if (!(isFollowUp && history.amendLast(prompt, answerText(answer)))) history.record(prompt, answerText(answer));
      }
      return answer;
    },
    summarise: summariseWith,
    reviseAnswer(prompt, answer) {
      history?.reviseAnswer(prompt, answer);
    },
    stop() {
      void persister?.flush();
      history?.stop();
    },
  };
}
