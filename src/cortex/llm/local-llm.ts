// LocalLLM: any OpenAI-compatible chat-completions server (llama.cpp's llama-server, Ollama, vLLM, LM Studio...) at `base_url`, no key needed.
import { CloudHttpError } from '../../cloud/errors.js';
import { CloudHttp, type Credential } from '../../cloud/http.js';
import type { ChatMessage, ToolDefinition } from '../../cloud/protocol.js';
import { DEFAULT_RETRY, NO_RETRY } from '../../cloud/retry.js';
import { answerEvents, type ChatStreamEvent, wholeAnswerEvents } from '../../cloud/sse.js';
import { describeError } from '../../errors.js';
import { LocalLlmOptions } from '../../plugins/schemas/llms.js';
import { packMessages } from '../history-pack.js';
import type { LlmAnswer, LlmFactory, LlmRequest } from '../llm.js';
import { askModel } from './ask-model.js';
import { chatPlugin } from './chat-plugin.js';
import { probeContext } from './context-probe.js';
import { fromJsonAnswer, jsonAnswerFormat, withJsonInstruction } from './json-answer.js';
import { ModelHealth } from './model-health.js';

export { LocalLlmOptions };

/** The window assumed when neither the setting nor the server says (the smallest common default: Ollama's). */
export const DEFAULT_CONTEXT_TOKENS = 4096;
const ENDPOINT = 'POST /chat/completions';

/** A server's refusal of tool calling (llama-server without --jinja, an Ollama model without tools, vLLM without a tool parser). */
export function refusesTools(err: unknown): boolean {
  return err instanceof CloudHttpError && (err.status === 400 || err.status === 500 || err.status === 501) && /tool/i.test(describeError(err));
}

/** Sends one chat-completions request: the answer's events, streamed (SSE) or from one JSON body. */
function chatSender(http: CloudHttp, credential: Credential) {
  return async (body: Record<string, unknown>, stream: boolean, signal: AbortSignal): Promise<AsyncIterable<ChatStreamEvent>> => {
    const res = await http.send({
      method: 'POST',
      path: '/chat/completions',
      body: stream ? { ...body, stream: true } : body,
      credential,
      signal,
      accept: stream ? 'text/event-stream, application/json' : 'application/json',
    });
    return stream ? answerEvents(res, ENDPOINT, signal) : wholeAnswerEvents(res, ENDPOINT);
  };
}

/**
 * The LocalLLM plugin (its descriptor is in src/plugins/llms.ts). Decisions:
 * - the context window is the `context_tokens` setting, else what the server reports (asked once when
 *   the plugin starts), else 4096; a request keeps a quarter of it (at least `max_tokens`) for the answer and
 *   leaves out the oldest remembered exchanges that do not fit;
 * - `tool_mode: json` (or `auto` after the server refused tools) sends no `tools` but a schema-constrained
 *   JSON answer (`response_format: json_schema`), asked whole: its text is JSON, never spoken as it comes.
 */
export const createLocalLlm: LlmFactory = (config, ctx) => {
  const options = LocalLlmOptions.parse(config ?? {});
  const http = new CloudHttp({ baseUrl: options.base_url, retry: options.retry ? DEFAULT_RETRY : NO_RETRY });
  const credential: Credential = options.api_key ? { kind: 'bearer', token: options.api_key } : { kind: 'none' };
  const label = `LocalLLM ${options.model}`;
  const health = new ModelHealth(label, ctx.logger, ctx.report);
  let jsonTools = options.tool_mode === 'json';
  // The server is asked for its window once, in the background: no call waits for it (the first, with
  // no history yet, packs against the default).
  let contextTokens = options.context_tokens ?? DEFAULT_CONTEXT_TOKENS;
  if (!options.context_tokens)
    void probeContext(options.base_url, options.model, 3000, options.api_key ? { authorization: `Bearer ${options.api_key}` } : {})
      .then((probe) => {
        if (!probe) return;
        contextTokens = probe.tokens;
        ctx.logger.info({ model: options.model, context_tokens: probe.tokens }, `${label}: context window ${probe.tokens} tokens (from ${probe.server})`);
      })
      .catch(() => undefined);
  const send = chatSender(http, credential);

  const base = (messages: ChatMessage[]) => ({
    model: options.model,
    messages,
    ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
    ...(options.max_tokens !== undefined ? { max_tokens: options.max_tokens } : {}),
  });

  function packed(request: LlmRequest): ChatMessage[] {
    const total = contextTokens;
    const reserve = Math.max(options.max_tokens ?? 0, Math.floor(total / 4));
    const pack = packMessages(request.messages, Math.max(1, total - reserve));
    if (pack.dropped)
      ctx.logger.debug({ dropped: pack.dropped, tokens: pack.tokens }, `${label}: ${pack.dropped} old message(s) left out to fit ${total} tokens`);
    return pack.messages;
  }

  async function askJson(request: LlmRequest, messages: ChatMessage[], signal: AbortSignal, startedAt: number): Promise<LlmAnswer> {
    const tools: ToolDefinition[] = request.tools;
    const body = { ...base(tools.length ? withJsonInstruction(messages, tools) : messages), ...(tools.length ? jsonAnswerFormat(tools) : {}) };
    const whole = await askModel({ events: (s) => send(body, s, signal), stream: false, health, observer: undefined, signal, startedAt, model: options.model });
    if (!tools.length) return whole;
    const { text: _text, toolCalls: _calls, ...rest } = whole;
    return { ...rest, ...fromJsonAnswer(whole.text, startedAt) };
  }

  return chatPlugin({
    type: 'LocalLLM',
    label,
    timeoutMs: options.timeout_seconds * 1000,
    historyLength: options.history_length,
    historyFile: options.persist_history ? ctx.historyFile : undefined,
    logger: ctx.logger,
    health,
    async complete(request, signal, observer) {
      const startedAt = Date.now();
      const messages = packed(request);
      if (jsonTools && request.tools.length) return askJson(request, messages, signal, startedAt);
      const body = { ...base(messages), ...(request.tools.length ? { tools: request.tools } : {}) };
      try {
        return await askModel({
          events: (stream) => send(body, stream, signal),
          stream: options.stream,
          health,
          observer,
          signal,
          startedAt,
          model: options.model,
          onObserverError: (err) => ctx.logger.warn({ err }, 'stream observer failed'),
        });
      } catch (err) {
        if (options.tool_mode !== 'auto' || !request.tools.length || signal.aborted || !refusesTools(err)) throw err;
        jsonTools = true;
        ctx.logger.warn(`${label}: the server refused tool calling (${describeError(err)}); asking for a JSON answer for the rest of this session`);
        return askJson(request, messages, signal, startedAt);
      }
    },
  });
};
