// LocalLLM: any OpenAI-compatible chat-completions server (llama.cpp, ollama, vLLM...) at `base_url`, no key needed.
import { z } from 'zod';
import { CloudHttp, type Credential } from '../../cloud/http.js';
import { NO_RETRY, DEFAULT_RETRY } from '../../cloud/retry.js';
import { ToolCallSchema, UsageSchema } from '../../cloud/protocol.js';
import { LocalLlmOptions } from '../../plugins/schemas/llms.js';
import { CloudProtocolError } from '../../cloud/errors.js';
import { parseChatStream } from '../../cloud/sse.js';
import type { LlmAnswer, LlmFactory } from '../llm.js';
import { answerFromCompletion } from './cloud-llm.js';
import { chatPlugin } from './chat-plugin.js';
import { assemble } from './stream.js';

export { LocalLlmOptions };

/**
 * Local servers differ in what they fill in (`id`, `created`, `usage`, `object`), so only what the
 * runtime reads is required: the first choice's message.
 */
const LocalCompletionSchema = z.looseObject({
  model: z.string().optional(),
  choices: z
    .array(
      z.looseObject({
        message: z.looseObject({
          content: z.string().nullable().optional(),
          tool_calls: z
            .array(ToolCallSchema.or(z.looseObject({ id: z.string().optional(), function: z.looseObject({ name: z.string(), arguments: z.string() }) })))
            .optional(),
        }),
      }),
    )
    .min(1, 'no choices'),
  usage: UsageSchema.nullable().optional(),
});

/** The LocalLLM plugin (its descriptor is in src/plugins/llms.ts). */
export const createLocalLlm: LlmFactory = (config, ctx) => {
  const options = LocalLlmOptions.parse(config ?? {});
  const http = new CloudHttp({ baseUrl: options.base_url, retry: options.retry ? DEFAULT_RETRY : NO_RETRY });
  const credential: Credential = options.api_key ? { kind: 'bearer', token: options.api_key } : { kind: 'none' };
  return chatPlugin({
    type: 'LocalLLM',
    label: `LocalLLM ${options.model}`,
    timeoutMs: options.timeout_seconds * 1000,
    historyLength: options.history_length,
    historyFile: options.persist_history ? ctx.historyFile : undefined,
    logger: ctx.logger,
    async complete(request, signal, observer) {
      const startedAt = Date.now();
      const body = {
        model: options.model,
        messages: request.messages,
        ...(request.tools.length ? { tools: request.tools } : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...(options.max_tokens !== undefined ? { max_tokens: options.max_tokens } : {}),
        ...(options.stream ? { stream: true } : {}),
      };
      const req = { method: 'POST' as const, path: '/chat/completions', body, credential, signal };
      if (options.stream) {
        // A server that ignores `stream` answers JSON: that is read as a whole answer.
        const res = await http.send({ ...req, accept: 'text/event-stream, application/json' });
        observer?.requestSent?.(startedAt);
        const type = res.headers.get('content-type') ?? '';
        if (type.includes('text/event-stream') && res.body) {
          const events = parseChatStream(res.body, 'POST /chat/completions', signal);
          return assemble(events, observer, startedAt, options.model, (err) => ctx.logger.warn({ err }, 'stream observer failed'));
        }
        let data: unknown;
        try {
          data = await res.json();
        } catch {
          throw new CloudProtocolError('POST /chat/completions', `expected an event stream or JSON, got ${type || 'no content type'}`);
        }
        const parsed = LocalCompletionSchema.safeParse(data);
        if (!parsed.success)
          throw new CloudProtocolError('POST /chat/completions', `unexpected response shape: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
        return fromLocal(parsed.data, startedAt);
      }
      observer?.requestSent?.(startedAt);
      return fromLocal(await http.json(req, LocalCompletionSchema), startedAt);
    },
  });

  function fromLocal(res: z.infer<typeof LocalCompletionSchema>, startedAt: number): LlmAnswer {
    return answerFromCompletion(
      { model: res.model ?? options.model, choices: res.choices as never, ...(res.usage ? { usage: res.usage } : {}) },
      startedAt,
      Date.now(),
    );
  }
};
