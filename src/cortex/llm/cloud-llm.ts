// CloudLLM: the hosted chat completions of one provider and model, with the model checked against the provider's prefixes.
import { chatCost } from '../../cloud/prices.js';
import type { ChatCompletionResponse } from '../../cloud/protocol.js';
import { CloudLlmOptions } from '../../plugins/schemas/llms.js';
import type { LlmAnswer, LlmFactory, LlmToolCall } from '../llm.js';
import { chatPlugin } from './chat-plugin.js';
import { assemble } from './stream.js';

export { CloudLlmOptions };

/** Turns the first choice of a completion into text and parsed tool calls; unparsable arguments are kept as text. */
export function answerFromCompletion(
  res: Pick<ChatCompletionResponse, 'choices' | 'model'> & { usage?: ChatCompletionResponse['usage'] | undefined },
  startedAt: number,
  now: number,
): LlmAnswer {
  const message = res.choices[0]?.message as
    | { content?: string | null; tool_calls?: Array<{ id?: string; function: { name: string; arguments: string } }> }
    | undefined;
  const toolCalls: LlmToolCall[] = (message?.tool_calls ?? []).map((c) => {
    let args: unknown = c.function.arguments;
    try {
      args = JSON.parse(c.function.arguments);
    } catch {
      // Kept as the raw string: the action's schema rejects it with a clear message.
    }
    return { ...(c.id ? { id: c.id } : {}), name: c.function.name, arguments: args };
  });
  const text = message?.content ?? undefined;
  return { ...(text ? { text } : {}), toolCalls, ...(res.usage ? { usage: res.usage } : {}), model: res.model, latencyMs: now - startedAt };
}

/** The CloudLLM plugin (its descriptor is in src/plugins/llms.ts). */
export const createCloudLlm: LlmFactory = (config, ctx) => {
  const options = CloudLlmOptions.parse(config ?? {});
  return chatPlugin({
    type: 'CloudLLM',
    label: `CloudLLM ${options.provider}/${options.model}`,
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
      };
      let answer: LlmAnswer;
      if (options.stream) {
        const stream = await ctx.cloud.chat.stream(options.provider, body, { signal });
        observer?.requestSent?.(startedAt);
        answer = await assemble(stream, observer, startedAt, options.model, (err) => ctx.logger.warn({ err }, 'stream observer failed'));
      } else {
        observer?.requestSent?.(startedAt);
        answer = answerFromCompletion(await ctx.cloud.chat.create(options.provider, body, { signal }), startedAt, Date.now());
      }
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
