// A model server without tool calling answers in JSON constrained by a schema: the tools become that schema, the answer becomes text and tool calls again.
import type { ChatMessage, ToolDefinition } from '../../cloud/protocol.js';
import type { LlmToolCall } from '../llm.js';

/**
 * The JSON Schema of an answer: `{"say": string, "calls": [{"name": <tool>, "arguments": {...}}]}`,
 * each call's arguments constrained by its tool's parameters. Sent as OpenAI's
 * `response_format: {type: "json_schema"}`, which llama-server (grammar from the schema), Ollama
 * (`format`) and vLLM (guided decoding) all accept on their OpenAI endpoints.
 */
export function answerSchema(tools: ToolDefinition[]): Record<string, unknown> {
  const call = tools.map((t) => ({
    type: 'object',
    properties: { name: { const: t.function.name }, arguments: t.function.parameters ?? { type: 'object' } },
    required: ['name', 'arguments'],
  }));
  return {
    type: 'object',
    properties: {
      say: { type: 'string' },
      calls: { type: 'array', items: call.length === 1 ? call[0] : { anyOf: call } },
    },
    required: ['calls'],
  };
}

/** The request's extra fields for a JSON answer. */
export function jsonAnswerFormat(tools: ToolDefinition[]): Record<string, unknown> {
  return { response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: answerSchema(tools) } } };
}

/** The instruction that tells the model what its JSON means (appended to the first system message, or as one). */
export function jsonAnswerInstruction(tools: ToolDefinition[]): string {
  const lines = tools.map((t) => `- ${t.function.name}: ${t.function.description ?? ''} arguments: ${JSON.stringify(t.function.parameters ?? {})}`);
  return [
    'Answer with one JSON object only: {"say": "<words to say, or empty>", "calls": [{"name": "<tool>", "arguments": {...}}]}.',
    'The tools you may call:',
    ...lines,
  ].join('\n');
}

export function withJsonInstruction(messages: ChatMessage[], tools: ToolDefinition[]): ChatMessage[] {
  const text = jsonAnswerInstruction(tools);
  const i = messages.findIndex((m) => m.role === 'system');
  if (i < 0) return [{ role: 'system', content: text }, ...messages];
  return messages.map((m, j) => (j === i ? { ...m, content: `${m.content}\n\n${text}` } : m));
}

/** The text and tool calls of a JSON answer; a text that is not such JSON is plain text (a model that ignored the format). */
export function fromJsonAnswer(content: string | undefined, tick = 0): { text?: string; toolCalls: LlmToolCall[] } {
  if (!content?.trim()) return { toolCalls: [] };
  let json: unknown;
  try {
    json = JSON.parse(content);
  } catch {
    return { text: content, toolCalls: [] };
  }
  const o = (json ?? {}) as { say?: unknown; calls?: unknown };
  const calls = Array.isArray(o.calls) ? o.calls : [];
  const toolCalls: LlmToolCall[] = calls
    .filter((c): c is { name: string; arguments?: unknown } => typeof c === 'object' && c !== null && typeof (c as { name?: unknown }).name === 'string')
    .map((c, i) => ({ id: `json_${tick}_${i}`, name: c.name, arguments: c.arguments ?? {} }));
  const text = typeof o.say === 'string' && o.say.trim() ? o.say : undefined;
  return { ...(text ? { text } : {}), toolCalls };
}
