// Wire protocol of the hosted API: zod schemas and TS types of every HTTP body and socket message, shared by client and local service.
import { z } from 'zod';
import { ASR_RATES, KEY_PREFIXES } from './catalog.js';

/*
 * Decisions where hosted-api.md is silent (also in docs/service.md, "The hosted API client"):
 * - Chat messages may also have role `tool` and assistant `tool_calls`, in OpenAI's function-calling shape.
 * - `top_p` is checked against 0..1 (OpenAI's range); `max_tokens` must be a positive integer.
 * - Streamed chunks are OpenAI `chat.completion.chunk` objects sent as SSE `data:` lines; the last
 *   chunk before `data: [DONE]` has `choices: []` and carries `usage`. An error after the first byte
 *   is sent as `data: {"error": "..."}` and the stream ends without `[DONE]`.
 * - `finish_reason` is any string; known values are `stop`, `length`, `tool_calls`, `content_filter`.
 * - The `speechb` TTS request requires `text`; `voice` and `language_code` are optional.
 * - The second ASR socket accepts any positive integer `rate`; the `speechlab` socket only ASR_RATES.
 * - The vision socket and the second ASR socket report errors as `{error: string}` text frames (the HTTP error shape).
 * Schemas of received messages are loose (unknown fields kept) so a newer server does not break us.
 */

// ---------- Chat completions ----------

export const ToolCallSchema = z.looseObject({
  id: z.string().min(1),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string().min(1), arguments: z.string() }),
});
export type ToolCall = z.infer<typeof ToolCallSchema>;

export const SystemMessageSchema = z.looseObject({ role: z.literal('system'), content: z.string() });
export const UserMessageSchema = z.looseObject({ role: z.literal('user'), content: z.string() });
export const AssistantMessageSchema = z
  .looseObject({
    role: z.literal('assistant'),
    content: z.string().nullable().optional(),
    tool_calls: z.array(ToolCallSchema).optional(),
  })
  .refine((m) => typeof m.content === 'string' || (m.tool_calls?.length ?? 0) > 0, {
    message: 'an assistant message needs content or tool_calls',
  });
export const ToolMessageSchema = z.looseObject({
  role: z.literal('tool'),
  content: z.string(),
  tool_call_id: z.string().min(1),
});
export const ChatMessageSchema = z.union([SystemMessageSchema, UserMessageSchema, AssistantMessageSchema, ToolMessageSchema]);
export type ChatMessage = z.infer<typeof ChatMessageSchema>;
export type ChatRole = ChatMessage['role'];
export const CHAT_ROLES = ['system', 'user', 'assistant', 'tool'] as const;

export const ToolDefinitionSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'tool names are 1-64 letters, digits, _ or -'),
    description: z.string().optional(),
    /** JSON Schema of the arguments object. */
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ToolDefinition = z.infer<typeof ToolDefinitionSchema>;

export const ToolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.looseObject({ type: z.literal('function'), function: z.looseObject({ name: z.string().min(1) }) }),
]);

export const ChatCompletionRequestSchema = z.looseObject({
  model: z.string().min(1),
  messages: z.array(ChatMessageSchema).min(1),
  temperature: z.number().min(0).max(2).optional(),
  max_tokens: z.number().int().positive().optional(),
  top_p: z.number().min(0).max(1).optional(),
  stream: z.boolean().optional(),
  frequency_penalty: z.number().min(-2).max(2).optional(),
  presence_penalty: z.number().min(-2).max(2).optional(),
  tools: z.array(ToolDefinitionSchema).optional(),
  tool_choice: ToolChoiceSchema.optional(),
  /** Accepted for OpenAI clients; our server always sends usage on the last chunk. */
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).optional(),
});
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequestSchema>;

export const UsageSchema = z.looseObject({
  prompt_tokens: z.number().int().nonnegative(),
  completion_tokens: z.number().int().nonnegative(),
  total_tokens: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof UsageSchema>;

export const FINISH_REASONS = ['stop', 'length', 'tool_calls', 'content_filter'] as const;

export const ChatCompletionResponseSchema = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().int().nonnegative(),
      message: z.looseObject({
        role: z.literal('assistant'),
        content: z.string().nullable(),
        tool_calls: z.array(ToolCallSchema).optional(),
      }),
      finish_reason: z.string().nullable(),
    }),
  ),
  usage: UsageSchema,
});
export type ChatCompletionResponse = z.infer<typeof ChatCompletionResponseSchema>;

/** One fragment of a tool call in a stream; `index` says which call it extends. */
export const ToolCallDeltaSchema = z.looseObject({
  index: z.number().int().nonnegative(),
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
});
export type ToolCallDelta = z.infer<typeof ToolCallDeltaSchema>;

export const ChatCompletionChunkSchema = z.looseObject({
  id: z.string(),
  object: z.literal('chat.completion.chunk'),
  created: z.number().int(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number().int().nonnegative(),
      delta: z.looseObject({
        role: z.literal('assistant').optional(),
        content: z.string().nullable().optional(),
        tool_calls: z.array(ToolCallDeltaSchema).optional(),
      }),
      finish_reason: z.string().nullable().optional(),
    }),
  ),
  usage: UsageSchema.nullable().optional(),
});
export type ChatCompletionChunk = z.infer<typeof ChatCompletionChunkSchema>;

/** The SSE data line that ends a chat stream. */
export const SSE_DONE = '[DONE]';

// ---------- Errors ----------

/** Body of every HTTP error (and of a 401 at a socket upgrade). `details` is optional on vendor 503s. */
export const ErrorBodySchema = z.looseObject({ error: z.string(), details: z.string().optional() });
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

// ---------- Speech synthesis ----------

export const SpeechlabTtsRequestSchema = z.looseObject({
  input: z.string().min(1),
  voice: z.union([z.string().min(1), z.record(z.string(), z.unknown())]).optional(),
  model: z.string().min(1).optional(),
  response_format: z.string().min(1).optional(),
  speed: z.number().min(0.5).max(2).optional(),
  speechlab_api_key: z.string().min(1).optional(),
});
export type SpeechlabTtsRequest = z.infer<typeof SpeechlabTtsRequestSchema>;

export const SpeechlabTtsResponseSchema = z.looseObject({ text: z.string(), response: z.string(), format: z.string() });
export type SpeechlabTtsResponse = z.infer<typeof SpeechlabTtsResponseSchema>;

export const SpeechbTtsRequestSchema = z.looseObject({
  text: z.string().min(1),
  voice: z.string().min(1).optional(),
  language_code: z.string().min(1).optional(),
});
export type SpeechbTtsRequest = z.infer<typeof SpeechbTtsRequestSchema>;

export const SpeechbTtsResponseSchema = z.looseObject({ audio: z.string() });
export type SpeechbTtsResponse = z.infer<typeof SpeechbTtsResponseSchema>;

// ---------- Speech recognition sockets ----------

export const AsrRateSchema = z.literal(ASR_RATES);

/** Any client message of the `speechlab` socket: `rate` and `language_code` matter only in the first. */
export const AsrClientMessageSchema = z.looseObject({
  audio: z.string(),
  rate: AsrRateSchema.optional(),
  language_code: z.string().min(1).optional(),
  /**
   * Extension of the local service (sent only to a server whose `connection` message announced it):
   * the utterance ends here, after this message's audio (usually empty); the server commits it at
   * once, without the silence its endpointing would wait for.
   */
  end_of_utterance: z.boolean().optional(),
});
export type AsrClientMessage = z.infer<typeof AsrClientMessageSchema>;
/** The first message of a session, as this client always sends it. */
export type AsrFirstMessage = { audio: string; rate: z.infer<typeof AsrRateSchema>; language_code: string };
/** Every later message. */
export type AsrAudioMessage = { audio: string };

export const AsrConnectionMessageSchema = z.looseObject({
  type: z.literal('connection'),
  message: z.string(),
  clientId: z.string(),
  /** Extension of the local service: it takes `end_of_utterance` client messages (hosted servers do not say it; they get silence to commit on). */
  end_of_utterance: z.boolean().optional(),
});
export const AsrPartialMessageSchema = z.looseObject({
  type: z.literal('partial'),
  asr_reply: z.string(),
  clientId: z.string(),
  time: z.number().int(),
});
export const AsrInfoMessageSchema = z.looseObject({ type: z.literal('info'), message: z.string(), clientId: z.string() });
export const AsrErrorMessageSchema = z.looseObject({ type: z.literal('error'), message: z.string(), clientId: z.string() });
/** A committed transcript: `asr_reply` and no `type`. */
export const AsrCommittedMessageSchema = z
  .looseObject({ asr_reply: z.string(), clientId: z.string(), time: z.number().int() })
  .refine((m) => !('type' in m) || m.type === undefined, { message: 'a committed transcript has no type' });

export const AsrServerMessageSchema = z.union([
  AsrConnectionMessageSchema,
  AsrPartialMessageSchema,
  AsrInfoMessageSchema,
  AsrErrorMessageSchema,
  AsrCommittedMessageSchema,
]);
export type AsrConnectionMessage = z.infer<typeof AsrConnectionMessageSchema>;
export type AsrPartialMessage = z.infer<typeof AsrPartialMessageSchema>;
export type AsrInfoMessage = z.infer<typeof AsrInfoMessageSchema>;
export type AsrErrorMessage = z.infer<typeof AsrErrorMessageSchema>;
export type AsrCommittedMessage = z.infer<typeof AsrCommittedMessageSchema>;
export type AsrServerMessage = z.infer<typeof AsrServerMessageSchema>;

/**
 * The spec's client rule: a message with `asr_reply` and a `type` other than `partial` (including no
 * `type`) is a final transcript. Accepts any parsed JSON, not only schema-valid messages.
 */
export function isFinalTranscript(msg: unknown): msg is { asr_reply: string; type?: string } {
  if (!msg || typeof msg !== 'object') return false;
  const m = msg as { asr_reply?: unknown; type?: unknown };
  return typeof m.asr_reply === 'string' && m.type !== 'partial';
}

/** Client message of the second (`speechb`) ASR socket; `language_code` in region form, e.g. `en-US`. */
export const SpeechbAsrClientMessageSchema = z.looseObject({
  audio: z.string(),
  rate: z.number().int().positive().optional(),
  language_code: z.string().min(1).optional(),
  /** The local service's extension, as on the `speechlab` socket (this socket cannot announce it: it sends no `connection`). */
  end_of_utterance: z.boolean().optional(),
});
export type SpeechbAsrClientMessage = z.infer<typeof SpeechbAsrClientMessageSchema>;

export const SpeechbAsrReplySchema = z.looseObject({ asr_reply: z.string() });
export type SpeechbAsrReply = z.infer<typeof SpeechbAsrReplySchema>;
/** What the second ASR socket sends: transcripts, or `{error}` frames (decision: the spec shows only `{asr_reply}`). */
export const SpeechbAsrServerMessageSchema = z.union([SpeechbAsrReplySchema, ErrorBodySchema]);
export type SpeechbAsrServerMessage = z.infer<typeof SpeechbAsrServerMessageSchema>;

// ---------- Vision socket ----------

export const VlmClientMessageSchema = z.looseObject({
  /** Unix time of capture in seconds (float). */
  timestamp: z.number().nonnegative(),
  /** Base64 JPEG. */
  frame: z.string().min(1),
});
export type VlmClientMessage = z.infer<typeof VlmClientMessageSchema>;

export const VlmReplySchema = z.looseObject({ vlm_reply: z.string() });
export type VlmReply = z.infer<typeof VlmReplySchema>;
export const VlmServerMessageSchema = z.union([VlmReplySchema, ErrorBodySchema]);
export type VlmServerMessage = z.infer<typeof VlmServerMessageSchema>;

// ---------- Account and keys ----------

export const KeyPrefixSchema = z.enum(KEY_PREFIXES);

export const ApiKeyRecordSchema = z.looseObject({
  id: z.string(),
  user_id: z.string(),
  name: z.string(),
  prefix: KeyPrefixSchema,
  total_cost: z.number().int().nonnegative(),
  deleted: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecordSchema>;

export const BalanceRecordSchema = z.looseObject({
  plan: z.string(),
  cu_balance: z.number().int(),
  monthly_unused_cu: z.number().int(),
  monthly_total_cu: z.number().int(),
  current_period_end: z.string().nullable(),
  cancel_at_period_end: z.boolean(),
});
export type BalanceRecord = z.infer<typeof BalanceRecordSchema>;

export const CreateKeyResponseSchema = z.looseObject({
  message: z.string(),
  api_key: z.string(),
  api_key_info: ApiKeyRecordSchema,
});
export type CreateKeyResponse = z.infer<typeof CreateKeyResponseSchema>;

export const ListKeysResponseSchema = z.looseObject({ api_keys: z.array(ApiKeyRecordSchema) });
export type ListKeysResponse = z.infer<typeof ListKeysResponseSchema>;

export const DeleteKeyRequestSchema = z.looseObject({ id: z.string().min(1) });
export type DeleteKeyRequest = z.infer<typeof DeleteKeyRequestSchema>;

export const DeleteKeyResponseSchema = z.looseObject({ message: z.string() });
export type DeleteKeyResponse = z.infer<typeof DeleteKeyResponseSchema>;

// ---------- Paths ----------

/** HTTP paths relative to base_url, and socket paths relative to ws_base_url. */
export const PATHS = {
  chat: (provider: string) => `/api/core/${provider}/chat/completions`,
  speechlabTts: '/speechlab/tts',
  speechlabTtsStream: '/speechlab/tts/audio/speech',
  speechbTts: '/api/core/speechb/tts',
  balance: '/api/core/account/balance',
  listKeys: '/api/core/api_keys',
  createKey: '/api/core/api_keys/create',
  deleteKey: '/api/core/api_keys/delete',
  speechlabAsr: '/api/core/speechlab/asr',
  speechlabAsrV1: '/api/core/v1/speechlab/asr',
} as const;
