// Metering math of the local service: prices from the catalog turned into exact micro-CU charges, and the rounding rules.
import { ASR_PRICE_PER_MINUTE, CHAT_PRICES, TTS_PRICE_PER_M_CHARS, type ChatPrice, type Provider } from '../cloud/catalog.js';

/**
 * Unit of account: the micro-CU (1e-6 CU). Prices are CU per 1M tokens or characters, so a charge of
 * `n` tokens at price `P` is exactly `n * P` micro-CU: no rounding for chat and speech synthesis.
 * Recognition (CU per minute of audio) is the one fractional case: rounded half-up to a whole micro-CU
 * over the cumulative audio of a session, so splitting audio into chunks never changes the total.
 *
 * Reported figures (integers in the API): `total_cost` rounds UP to whole CU (never reports less
 * than was used), balances round DOWN (never report more than is available).
 */
export const MICRO = 1_000_000;

export function microToCostCu(micro: number): number {
  return Math.ceil(micro / MICRO);
}
export function microToBalanceCu(micro: number): number {
  return Math.floor(micro / MICRO);
}
export function cuToMicro(cu: number): number {
  return Math.round(cu * MICRO);
}

/**
 * The price row of a chat model. Lookup order: an exact row of the provider; else the longest row of
 * the provider that is a prefix of the model (dated variants such as `gen-4o-mini-2024-07-18`); else a
 * row of the provider whose part after `org/` equals or prefixes the model (`qw3-...` matches
 * `qw/qw3-...`). A supported model without any row is charged at the provider's most expensive row:
 * the service never undercharges an unpriced model.
 */
export function chatPrice(provider: Provider, model: string): ChatPrice {
  const rows = CHAT_PRICES.filter((r) => r.provider === provider);
  const exact = rows.find((r) => r.model === model);
  if (exact) return exact;
  const byPrefix = rows.filter((r) => model.startsWith(r.model)).sort((a, b) => b.model.length - a.model.length)[0];
  if (byPrefix) return byPrefix;
  const bare = (m: string): string => m.slice(m.indexOf('/') + 1);
  const byBare = rows.filter((r) => bare(model).startsWith(bare(r.model))).sort((a, b) => b.model.length - a.model.length)[0];
  if (byBare) return byBare;
  const dearest = [...rows].sort((a, b) => b.output + b.input - (a.output + a.input))[0];
  if (!dearest) throw new Error(`no price rows for ${provider}`);
  return dearest;
}

/** Exact micro-CU of a chat completion. */
export function chatCostMicro(price: Pick<ChatPrice, 'input' | 'output'>, promptTokens: number, completionTokens: number): number {
  return promptTokens * price.input + completionTokens * price.output;
}

export type TtsVendor = keyof typeof TTS_PRICE_PER_M_CHARS;

/** Exact micro-CU of synthesising `characters` characters (Unicode code points). */
export function ttsCostMicro(vendor: TtsVendor, characters: number): number {
  return characters * TTS_PRICE_PER_M_CHARS[vendor];
}

/** Characters as billed: Unicode code points, so an emoji is one character, not two UTF-16 units. */
export function billedCharacters(text: string): number {
  return [...text].length;
}

export type AsrRecognizer = keyof typeof ASR_PRICE_PER_MINUTE;

/**
 * Micro-CU of `bytes` of s16le mono PCM at `rate` Hz: seconds = bytes / (rate * 2), priced per minute,
 * rounded half-up to a whole micro-CU. Integer arithmetic (BigInt) so large sessions stay exact.
 */
export function asrCostMicro(recognizer: AsrRecognizer, bytes: number, rate: number): number {
  const num = BigInt(bytes) * BigInt(ASR_PRICE_PER_MINUTE[recognizer]) * BigInt(MICRO);
  const den = BigInt(rate) * 2n * 60n;
  return Number((num * 2n + den) / (den * 2n));
}

/**
 * Token estimate used when a backend reports no usage (the offline rule-based model): one token per
 * 4 characters, rounded up, at least 1 for non-empty text. Documented as an estimate.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  return Math.max(1, Math.ceil(text.length / 4));
}
