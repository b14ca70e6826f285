// Metering of chat completions: the token bounds reserved at admission, which upstream usage is believed, and the charge that settles a request.
import type { Provider } from '../../cloud/catalog.js';
import type { ChatCompletionRequest, Usage } from '../../cloud/protocol.js';
import type { Reservation } from '../accounts.js';
import type { ServiceContext } from '../context.js';
import type { VerifiedKey } from '../keys.js';
import { chatCostMicro, chatPrice } from '../metering.js';

/** Output tokens reserved for the offline rule-based model, whose answers are short (at most ~300 tokens). */
export const RULES_RESERVE_TOKENS = 512;

/** The most tokens a request can cost, and their price: what admission reserves. */
export interface ChatBounds {
  /** Prompt tokens can be at most this: one per UTF-8 byte of the messages and tools, plus framing. */
  promptTokens: number;
  /** Completion tokens can be at most this: the request's max_tokens (or max_completion_tokens), else limits.chatReserveTokens. */
  outputTokens: number;
  /** Whether the service must send `max_tokens: outputTokens` upstream (the request named no bound). */
  injectMaxTokens: boolean;
  reserveMicro: number;
}

/**
 * Upper bounds of a request's usage. Prompt: every token of a byte-level tokenizer is at least one
 * byte, so the UTF-8 bytes of the messages and tool definitions, plus 8 tokens of framing per message
 * and 16 per request, bound the prompt whatever the upstream's tokenizer. Output: the request's own
 * bound, else limits.chatReserveTokens, which is then sent upstream as max_tokens.
 */
export function chatBounds(ctx: ServiceContext, provider: Provider, request: ChatCompletionRequest, offline: boolean): ChatBounds {
  const bytes = Buffer.byteLength(JSON.stringify(request.messages)) + (request.tools ? Buffer.byteLength(JSON.stringify(request.tools)) : 0);
  const promptTokens = bytes + 8 * request.messages.length + 16;
  const own = request.max_tokens ?? positiveInt((request as { max_completion_tokens?: unknown }).max_completion_tokens);
  const outputTokens = offline ? RULES_RESERVE_TOKENS : (own ?? ctx.limits.chatReserveTokens);
  return {
    promptTokens,
    outputTokens,
    injectMaxTokens: !offline && own === undefined,
    reserveMicro: chatCostMicro(chatPrice(provider, request.model), promptTokens, outputTokens),
  };
}

function positiveInt(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : undefined;
}

/**
 * The upstream's usage when it is believable: two non-negative safe integers. Anything else
 * (missing, negative, fractional, not a number) is replaced by the estimate, so a broken or hostile
 * upstream can neither make a charge negative nor keep an answer from being charged.
 */
export function validUsage(u: unknown): Usage | undefined {
  if (!u || typeof u !== 'object') return undefined;
  const { prompt_tokens: p, completion_tokens: c } = u as Record<string, unknown>;
  const ok = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  return ok(p) && ok(c) ? { prompt_tokens: p, completion_tokens: c, total_tokens: p + c } : undefined;
}

/**
 * The usage a completion is metered by: the upstream's believable usage, else `estimate()`. Usage
 * above the request's bounds is logged; the charge is then cut to the reservation (Accounts.settle),
 * so the balance never goes below zero (docs/service.md, "Metering").
 */
export function chargedUsage(ctx: ServiceContext, bounds: ChatBounds, reported: unknown, estimate: () => Usage, what: Record<string, unknown>): Usage {
  const valid = validUsage(reported);
  if (reported !== undefined && reported !== null && !valid) ctx.logger.warn(what, 'upstream usage not believable; charged the estimate');
  const u = valid ?? estimate();
  if (u.prompt_tokens > bounds.promptTokens || u.completion_tokens > bounds.outputTokens)
    ctx.logger.warn({ ...what, usage: u, bounds: [bounds.promptTokens, bounds.outputTokens] }, 'upstream usage above the bounds reserved for the request');
  return { prompt_tokens: u.prompt_tokens, completion_tokens: u.completion_tokens, total_tokens: u.prompt_tokens + u.completion_tokens };
}

/** Settles `r` with the charge of `usage`. */
export function settleChat(ctx: ServiceContext, r: Reservation, key: VerifiedKey, provider: Provider, model: string, usage: Usage): void {
  ctx.accounts.settle(r, {
    keyId: key.keyId,
    userId: key.userId,
    kind: 'chat',
    item: `${provider}/${model}`,
    quantityIn: usage.prompt_tokens,
    quantityOut: usage.completion_tokens,
    costMicro: chatCostMicro(chatPrice(provider, model), usage.prompt_tokens, usage.completion_tokens),
  });
}
