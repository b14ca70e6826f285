// Chat-completion backends of the local service: the upstream forwarder (JSON and raw SSE passthrough) and the offline rule-based model.
import { randomUUID } from 'node:crypto';
import type { Provider } from '../../cloud/catalog.js';
import type { ChatCompletionChunk, ChatCompletionRequest, ChatCompletionResponse, Usage } from '../../cloud/protocol.js';
import { estimateTokens } from '../metering.js';
import type { ChatBackendConfig } from '../options.js';
import { ruleAnswer } from './rule-chat.js';

/** A failure with the status and `{error}` text the route must send. */
export class BackendError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: string,
  ) {
    super(message);
  }
}

export interface ChatBackend {
  /** A whole completion; `usage` may be missing when the upstream sends none. */
  complete(req: ChatCompletionRequest, signal: AbortSignal): Promise<ChatCompletionResponse>;
  /** Raw SSE bytes, passed to the client as they arrive. Errors before the first byte are BackendErrors. */
  stream(req: ChatCompletionRequest, signal: AbortSignal): Promise<AsyncIterable<Uint8Array | string>>;
}

/** Prompt tokens as estimated when a backend reports none: message texts plus offered tool definitions. */
export function estimatePromptTokens(req: ChatCompletionRequest): number {
  const text = req.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
  return estimateTokens(text) + (req.tools ? estimateTokens(JSON.stringify(req.tools)) : 0);
}

export function createChatBackend(provider: Provider, cfg: ChatBackendConfig): ChatBackend {
  return cfg.kind === 'upstream' ? upstreamBackend(provider, cfg.baseUrl, cfg.apiKey) : rulesBackend();
}

function upstreamBackend(provider: Provider, baseUrl: string, apiKey: string | undefined): ChatBackend {
  const url = `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
  const call = async (body: unknown, signal: AbortSignal): Promise<Response> => {
    if (!apiKey) throw new BackendError(503, `${provider} API key not configured`);
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw err;
      throw new BackendError(503, `Failed to connect to ${provider} server`);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      let msg = text.slice(0, 500);
      try {
        const j = JSON.parse(text) as { error?: string | { message?: string } };
        msg = typeof j.error === 'string' ? j.error : (j.error?.message ?? msg);
      } catch {
        /* keep text */
      }
      // Upstream 4xx are the caller's problem and keep their status; upstream 5xx are the spec's 500.
      throw new BackendError(res.status < 500 ? res.status : 500, `${provider} upstream error ${res.status}: ${msg}`);
    }
    return res;
  };
  return {
    async complete(req, signal) {
      const res = await call({ ...req, stream: false }, signal);
      try {
        return (await res.json()) as ChatCompletionResponse;
      } catch {
        throw new BackendError(500, `${provider} upstream sent an invalid response`);
      }
    },
    async stream(req, signal) {
      const res = await call({ ...req, stream: true, stream_options: { include_usage: true } }, signal);
      if (!res.body) throw new BackendError(500, `${provider} upstream sent no body`);
      return res.body as unknown as AsyncIterable<Uint8Array>;
    },
  };
}

function rulesBackend(): ChatBackend {
  const answer = (req: ChatCompletionRequest) => {
    const a = ruleAnswer(req);
    const completion = (a.content ?? '') + a.toolCalls.map((t) => t.function.name + t.function.arguments).join('');
    const prompt = estimatePromptTokens(req);
    const out = estimateTokens(completion);
    const usage: Usage = { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out };
    return { a, usage, id: `chatcmpl-${randomUUID()}`, created: Math.floor(Date.now() / 1000) };
  };
  return {
    async complete(req) {
      const { a, usage, id, created } = answer(req);
      return {
        id,
        object: 'chat.completion',
        created,
        model: req.model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: a.content, ...(a.toolCalls.length ? { tool_calls: a.toolCalls } : {}) },
            finish_reason: a.toolCalls.length ? 'tool_calls' : 'stop',
          },
        ],
        usage,
      };
    },
    async stream(req) {
      const { a, usage, id, created } = answer(req);
      const base = { id, object: 'chat.completion.chunk' as const, created, model: req.model };
      const chunks: ChatCompletionChunk[] = [{ ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] }];
      for (const piece of (a.content ?? '').match(/\S+\s*/g) ?? [])
        chunks.push({ ...base, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
      a.toolCalls.forEach((t, index) => chunks.push({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, ...t }] }, finish_reason: null }] }));
      chunks.push({ ...base, choices: [{ index: 0, delta: {}, finish_reason: a.toolCalls.length ? 'tool_calls' : 'stop' }] });
      chunks.push({ ...base, choices: [], usage });
      return (async function* () {
        for (const c of chunks) yield `data: ${JSON.stringify(c)}\n\n`;
        yield 'data: [DONE]\n\n';
      })();
    },
  };
}
