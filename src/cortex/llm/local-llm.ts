// LocalLLM: any OpenAI-compatible chat-completions server (llama.cpp, ollama, vLLM...) at `base_url`, no key needed.
import { z } from 'zod';
import { CloudHttp, type Credential } from '../../cloud/http.js';
import { NO_RETRY, DEFAULT_RETRY } from '../../cloud/retry.js';
import { ToolCallSchema, UsageSchema } from '../../cloud/protocol.js';
import { LocalLlmOptions } from '../../plugins/schemas/llms.js';
import type { LlmFactory } from '../llm.js';
import { answerFromCompletion } from './cloud-llm.js';
import { chatPlugin } from './chat-plugin.js';

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
          tool_calls: z.array(ToolCallSchema.or(z.looseObject({ id: z.string().optional(), function: z.looseObject({ name: z.string(), arguments: z.string() }) }))).optional(),
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
    logger: ctx.logger,
    async complete(request, signal) {
      const startedAt = Date.now();
      const body = {
        model: options.model,
        messages: request.messages,
        ...(request.tools.length ? { tools: request.tools } : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...(options.max_tokens !== undefined ? { max_tokens: options.max_tokens } : {}),
      };
      const res = await http.json({ method: 'POST', path: '/chat/completions', body, credential, signal }, LocalCompletionSchema);
      return answerFromCompletion(
        {
          model: res.model ?? options.model,
          choices: res.choices as never,
          ...(res.usage ? { usage: res.usage } : {}),
        },
        startedAt,
        Date.now(),
      );
    },
  });
};
