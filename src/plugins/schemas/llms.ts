// The config blocks of the model plugins (CloudLLM, LocalLLM, MultiLLM) as zod schemas: data only, the provider table included.
import { z } from 'zod';
import { checkModel, PROVIDERS } from '../../cloud/catalog.js';

export const CloudLlmOptions = z
  .looseObject({
    provider: z.enum(PROVIDERS).default('provider_a'),
    model: z.string().min(1).default('gen-4o-mini'),
    temperature: z.number().min(0).max(2).optional(),
    max_tokens: z.number().int().positive().optional(),
    /** Seconds one call may take before it is aborted. */
    timeout_seconds: z.number().positive().default(20),
    agent_name: z.string().optional(),
    /** Past exchanges (prompt + answer) sent with each call; older ones are summarised by this model. */
    history_length: z.number().int().nonnegative().default(10),
    /** Stream the answer (SSE): speech and actions start while the model is still writing. False waits for the whole answer. */
    stream: z.boolean().default(true),
    /** Keep the conversation history in the state directory across restarts (with history_length > 0). */
    persist_history: z.boolean().default(true),
    /** Read by the runtime, not the model: false calls the model on every tick, even with nothing new (default true). */
    skip_idle: z.boolean().optional(),
  })
  .superRefine((o, ctx) => {
    const problem = checkModel(o.provider, o.model);
    if (problem) ctx.addIssue({ code: 'custom', path: ['model'], message: problem });
  });
export type CloudLlmOptions = z.infer<typeof CloudLlmOptions>;

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
  /** Stream the answer (SSE): speech and actions start while the model is still writing. False waits for the whole answer. */
  stream: z.boolean().default(true),
  /** Keep the conversation history in the state directory across restarts (with history_length > 0). */
  persist_history: z.boolean().default(true),
  /** Read by the runtime, not the model: false calls the model on every tick, even with nothing new (default true). */
  skip_idle: z.boolean().optional(),
  /**
   * Tokens of the model's context window: the oldest history leaves a request that would not fit. Absent,
   * it is asked of the server at the first call (llama-server /props, vLLM /v1/models, Ollama /api/show), else 4096.
   */
  context_tokens: z.number().int().positive().optional(),
  /**
   * How the model calls tools: `native` (the server's tool calling), `json` (one JSON answer constrained by
   * a schema, for servers or models without tool calling), `auto` (native; json for the rest of the session
   * once the server refuses tools).
   */
  tool_mode: z.enum(['auto', 'native', 'json']).default('auto'),
});
export type LocalLlmOptions = z.infer<typeof LocalLlmOptions>;

const ModelEntry = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('CloudLLM'), config: CloudLlmOptions.default(CloudLlmOptions.parse({})), timeout_seconds: z.number().positive().optional() }),
  z.looseObject({ type: z.literal('LocalLLM'), config: LocalLlmOptions, timeout_seconds: z.number().positive().optional() }),
]);

export const MultiLlmOptions = z.looseObject({
  /** `first_valid`: ask all at once, the first valid answer wins and the others are aborted. `fallback`: one after another. */
  strategy: z.enum(['first_valid', 'fallback']).default('fallback'),
  models: z.array(ModelEntry).min(1, 'at least one model'),
  /** Seconds each model may take (a model entry's own `timeout_seconds` wins). */
  timeout_seconds: z.number().positive().default(20),
  agent_name: z.string().optional(),
  /** Past exchanges kept by MultiLLM itself (the member models keep none); summaries use the same strategy. */
  history_length: z.number().int().nonnegative().default(10),
  /** Keep MultiLLM's conversation history in the state directory across restarts. Streaming is each member's `stream`. */
  persist_history: z.boolean().default(true),
  /** Read by the runtime, not the model: false calls the model on every tick, even with nothing new (default true). */
  skip_idle: z.boolean().optional(),
});
export type MultiLlmOptions = z.infer<typeof MultiLlmOptions>;
