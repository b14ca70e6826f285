// Prices in CU: turns usage (tokens per model, synthesized characters, recognized audio seconds) into compute units.
import { ASR_PRICE_PER_MINUTE, CHAT_PRICES, isProvider, TTS_PRICE_PER_M_CHARS, type ChatPrice, type Provider } from './catalog.js';

/*
 * Decisions (docs/service.md, "The hosted API client"):
 * - Chat price lookup: within the provider, the exact model name first, then the longest listed model
 *   that is a prefix of it (`gen-4o-mini-2024` -> gen-4o-mini, not gen-4o). For provider_e and provider_f,
 *   whose table names carry an `org/` part, a model without one is also matched against the part after
 *   the slash. No match means no price (undefined): never a guess.
 * - Rounding: each request's cost is computed exactly, then rounded up to a whole CU (ceil), so any
 *   non-empty request costs at least 1 CU and totals are sums of integers, like the server's `total_cost`.
 *   Zero usage costs 0.
 */

export interface ChatUsage {
  provider: Provider | string;
  model: string;
  promptTokens: number;
  completionTokens: number;
}

/** The price row used for a provider/model, per the lookup rule above. */
export function chatPriceFor(provider: Provider | string, model: string): ChatPrice | undefined {
  if (!isProvider(provider)) return undefined;
  const rows = CHAT_PRICES.filter((r) => r.provider === provider);
  const exact = rows.find((r) => r.model === model);
  if (exact) return exact;
  const names = (r: ChatPrice): string[] => {
    const slash = r.model.indexOf('/');
    return slash > 0 && !model.includes('/') ? [r.model, r.model.slice(slash + 1)] : [r.model];
  };
  let best: { row: ChatPrice; len: number } | undefined;
  for (const row of rows) {
    for (const name of names(row)) {
      if (model === name) return row;
      if (model.startsWith(name) && (!best || name.length > best.len)) best = { row, len: name.length };
    }
  }
  return best?.row;
}

/** Exact (unrounded) CU of one chat request, or undefined when the model has no price. */
export function chatCostExact(usage: ChatUsage): number | undefined {
  const price = chatPriceFor(usage.provider, usage.model);
  if (!price) return undefined;
  return (usage.promptTokens * price.input + usage.completionTokens * price.output) / 1_000_000;
}

/** CU of one chat request, rounded up to a whole CU; undefined when the model has no price. */
export function chatCost(usage: ChatUsage): number | undefined {
  const exact = chatCostExact(usage);
  return exact === undefined ? undefined : roundCu(exact);
}

/** CU of one synthesis request of `characters` characters (`speechlab` or `speechb`). */
export function ttsCost(vendor: keyof typeof TTS_PRICE_PER_M_CHARS, characters: number): number {
  return roundCu((characters * TTS_PRICE_PER_M_CHARS[vendor]) / 1_000_000);
}

/** CU of `seconds` of recognized audio: `speechlab` recognizer or a `general` cloud recognizer. */
export function asrCost(recognizer: keyof typeof ASR_PRICE_PER_MINUTE, seconds: number): number {
  return roundCu((seconds / 60) * ASR_PRICE_PER_MINUTE[recognizer]);
}

/** Whole CU, rounded up; tiny float noise (1e-9) is not charged as an extra unit. */
export function roundCu(exact: number): number {
  if (!(exact > 0)) return 0;
  return Math.ceil(exact - 1e-9);
}

/** A running total of a session's cost, by kind; unpriced chat requests are counted, not guessed. */
export class CostMeter {
  chat = 0;
  tts = 0;
  asr = 0;
  unpricedRequests = 0;

  addChat(usage: ChatUsage): number | undefined {
    const cu = chatCost(usage);
    if (cu === undefined) this.unpricedRequests++;
    else this.chat += cu;
    return cu;
  }

  addTts(vendor: keyof typeof TTS_PRICE_PER_M_CHARS, characters: number): number {
    const cu = ttsCost(vendor, characters);
    this.tts += cu;
    return cu;
  }

  addAsr(recognizer: keyof typeof ASR_PRICE_PER_MINUTE, seconds: number): number {
    const cu = asrCost(recognizer, seconds);
    this.asr += cu;
    return cu;
  }

  get total(): number {
    return this.chat + this.tts + this.asr;
  }
}
