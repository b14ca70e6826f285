// LocalLLM: any OpenAI-compatible chat-completions server (llama.cpp, ollama, vLLM...) at `base_url`, no key needed.
import { z } from 'zod';
import { CloudHttp, type Credential } from '../../cloud/http.js';
import { NO_RETRY, DEFAULT_RETRY } from '../../cloud/retry.js';
import { ToolCallSchema, UsageSchema } from '../../cloud/protocol.js';
import type { PluginSpec } from '../../plugin-registry.js';
import type { LlmFactory } from '../llm.js';
import { answerFromCompletion } from './cloud-llm.js';
import { chatPlugin } from './chat-plugin.js';

export const LocalLlmOptions = z.looseObject({
  /** Base address of the server's OpenAI API, e.g. `http://127.0.0.1:8080/v1`; requests go to `${base_url}/chat/completions`. */
  base_url: z.string().refine((u) => URL.canParse(u) && /^https?:$/.test(new URL(u).protocol), 'an http(s) URL'),
  /** Sent as `Authorization: Bearer` when set; local servers usually need none. */
  api_key: z.string().optional(),
  /** Model name the server knows; llama.cpp ignores it, ollama needs it. */
  model: z.string().min(1).default('local'),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  /** Seconds one call may take before it is aborted (local models on a Pi are slow). */
  timeout_seconds: z.number().positive().default(60),
  /** Repeat a call refused with 429/503 or a connection refused before any byte (a server still loading). */
  retry: z.boolean().default(true),
  agent_name: z.string().optional(),
  history_length: z.number().int().nonnegative().default(10),
  /** Read by the runtime, not the model: false calls the model on every tick, even with nothing new (default true). */
  skip_idle: z.boolean().optional(),
});
export type LocalLlmOptions = z.infer<typeof LocalLlmOptions>;

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

const create: LlmFactory = (config, ctx) => {
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

export const localLlmSpec: PluginSpec<LlmFactory> = {
  type: 'LocalLLM',
  description: 'Any OpenAI-compatible chat-completions server (POST {base_url}/chat/completions), e.g. llama.cpp or ollama; api_key optional',
  schema: LocalLlmOptions,
  create,
};
