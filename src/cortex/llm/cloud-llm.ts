// CloudLLM: the hosted chat completions of one provider and model, with the model checked against the provider's prefixes.
import { chatCost } from '../../cloud/prices.js';
import type { ChatCompletionResponse } from '../../cloud/protocol.js';
import { CloudLlmOptions } from '../../plugins/schemas/llms.js';
import type { LlmAnswer, LlmFactory, LlmToolCall } from '../llm.js';
import { askModel } from './ask-model.js';
import { chatPlugin } from './chat-plugin.js';
import { ModelHealth } from './model-health.js';

export { CloudLlmOptions };

/** Turns the first choice of a completion into text and parsed tool calls; unparsable arguments are kept as text. */
export function answerFromCompletion(
  res: Pick<ChatCompletionResponse, 'choices' | 'model'> & { usage?: ChatCompletionResponse['usage'] | undefined },
  startedAt: number,
  now: number,
): LlmAnswer {
  const message = res.choices[0]?.message as
    | {
        content?: string | null;
        reasoning_content?: unknown;
        reasoning?: unknown;
        tool_calls?: Array<{ id?: string; function: { name: string; arguments: unknown }; extra_content?: unknown }>;
      }
    | undefined;
  const toolCalls: LlmToolCall[] = (message?.tool_calls ?? []).map((c) => {
    let args: unknown = c.function.arguments;
    if (typeof args === 'string') {
      try {
        args = JSON.parse(args);
      } catch {
        // Kept as the raw string: the action's schema rejects it with a clear message.
      }
    }
    const extra = c.extra_content && typeof c.extra_content === 'object' ? (c.extra_content as Record<string, unknown>) : undefined;
    return { ...(c.id ? { id: c.id } : {}), name: c.function.name, arguments: args, ...(extra ? { extra } : {}) };
  });
  const text = message?.content ?? undefined;
  const thought = typeof message?.reasoning_content === 'string' ? message.reasoning_content : typeof message?.reasoning === 'string' ? message.reasoning : '';
  return {
    ...(text ? { text } : {}),
    ...(thought ? { reasoning: thought } : {}),
    toolCalls,
    ...(res.usage ? { usage: res.usage } : {}),
    model: res.model,
    latencyMs: now - startedAt,
  };
}

/** The CloudLLM plugin (its descriptor is in src/plugins/llms.ts). */
export const createCloudLlm: LlmFactory = (config, ctx) => {
  const options = CloudLlmOptions.parse(config ?? {});
  const label = `CloudLLM ${options.provider}/${options.model}`;
  const health = new ModelHealth(label, ctx.logger, ctx.report);
  return chatPlugin({
    type: 'CloudLLM',
    label,
    timeoutMs: options.timeout_seconds * 1000,
    historyLength: options.history_length,
    historyFile: options.persist_history ? ctx.historyFile : undefined,
    logger: ctx.logger,
    health,
    async complete(request, signal, observer) {
      const startedAt = Date.now();
      const body = {
        model: options.model,
        messages: request.messages,
        ...(request.tools.length ? { tools: request.tools } : {}),
        ...(options.temperature !== undefined ? { temperature: options.temperature } : {}),
        ...(options.max_tokens !== undefined ? { max_tokens: options.max_tokens } : {}),
      };
      const answer: LlmAnswer = await askModel({
        events: (stream) => ctx.cloud.chat.events(options.provider, body, { signal, stream }),
        stream: options.stream,
        health,
        observer,
        signal,
        startedAt,
        model: options.model,
        onObserverError: (err) => ctx.logger.warn({ err }, 'stream observer failed'),
      });
      const cost = answer.usage
        ? chatCost({
            provider: options.provider,
            model: options.model,
            promptTokens: answer.usage.prompt_tokens,
            completionTokens: answer.usage.completion_tokens,
          })
        : undefined;
      return cost === undefined ? answer : { ...answer, costCu: cost };
    },
  });
};
