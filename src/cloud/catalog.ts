// The hosted API's fixed tables as data: providers and model prefixes, prices in CU, speech defaults and limits.

export const PROVIDERS = ['provider_a', 'provider_b', 'provider_c', 'provider_d', 'provider_e', 'provider_f'] as const;
export type Provider = (typeof PROVIDERS)[number];

/** Supported model prefixes per provider (hosted-api.md, "Providers and supported model prefixes"). */
export const MODEL_PREFIXES: Record<Provider, readonly string[]> = {
  provider_a: ['gen-4o', 'gen-4o-mini', 'gen-4.1', 'gen-4.1-mini', 'gen-4.1-nano', 'gen-5', 'gen-5-mini', 'gen-5-nano'],
  provider_b: ['deep-chat'],
  provider_c: ['twin-3.5-flash', 'twin-3.1-pro-preview', 'twin-3.1-flash-lite', 'twin-2.5-flash', 'twin-2.5-flash-lite', 'twin-2.5-pro'],
  provider_d: ['gk-2-latest', 'gk-3-beta', 'gk-4-latest', 'gk-4'],
  provider_e: ['qw3-30b-a3b-instruct-2507', 'qw2.5-vl-72b-instruct', 'qw-2.5-7b-instruct'],
  provider_f: ['orgm/ll-3.1-70b-instruct', 'orgm/ll-3.3-70b-instruct', 'orgc/sage-mid-4.5', 'orgc/sage-top-4.1'],
};

export function isProvider(value: string): value is Provider {
  return (PROVIDERS as readonly string[]).includes(value);
}

/** True when `model` starts with one of the provider's supported prefixes (the spec's prefix matching). */
export function modelSupported(provider: Provider, model: string): boolean {
  return MODEL_PREFIXES[provider].some((p) => model.startsWith(p));
}

/** The 404 text of the spec for a model without a supported prefix. */
export function unsupportedModelMessage(provider: Provider, model: string): string {
  return `unsupported model: ${model}. Supported model prefixes for ${provider}: [${MODEL_PREFIXES[provider].join(', ')}]`;
}

/**
 * Checks a provider/model pair against the spec's prefix table. Returns the problem as one line, or
 * undefined when the pair is fine. Used by `cortexd check` and by the client before sending.
 */
export function checkModel(provider: string, model: string): string | undefined {
  if (!isProvider(provider)) return `unsupported model provider: ${provider} (known: ${PROVIDERS.join(', ')})`;
  if (!modelSupported(provider, model)) return unsupportedModelMessage(provider, model);
  return undefined;
}

export interface ChatPrice {
  provider: Provider;
  model: string;
  /** CU per 1M input tokens. */
  input: number;
  /** CU per 1M output tokens. */
  output: number;
}

const p = (letter: string): Provider => `provider_${letter}` as Provider;

/** Chat prices in CU per 1M tokens (hosted-api.md, "Prices (CU)"), exactly as listed. */
export const CHAT_PRICES: readonly ChatPrice[] = (
  [
    ['a', 'gen-4o', 42500, 170000],
    ['a', 'gen-4o-mini', 7000, 28000],
    ['a', 'gen-4.1', 35000, 140000],
    ['a', 'gen-4.1-mini', 7000, 28000],
    ['a', 'gen-4.1-nano', 2000, 8000],
    ['a', 'gen-5', 25000, 200000],
    ['a', 'gen-5-mini', 4500, 36000],
    ['a', 'gen-5-nano', 500, 4000],
    ['a', 'gen-5.1', 25000, 200000],
    ['a', 'gen-5.2', 35000, 280000],
    ['c', 'twin-3.5-flash', 12500, 90000],
    ['c', 'twin-3.1-pro-preview', 40000, 180000],
    ['c', 'twin-3.1-flash-lite', 2500, 15000],
    ['c', 'twin-2.5-flash', 3000, 25000],
    ['c', 'twin-2.5-flash-lite', 1000, 4000],
    ['c', 'twin-2.5-pro', 25000, 150000],
    ['b', 'deep-chat', 1400, 2800],
    ['d', 'gk-2-latest', 20000, 100000],
    ['d', 'gk-3-beta', 30000, 150000],
    ['d', 'gk-4-latest', 30000, 150000],
    ['d', 'gk-4', 30000, 150000],
    ['e', 'qw/qw3-30b-a3b-instruct-2507', 1500, 5500],
    ['e', 'deep/deep-v3.1', 10500, 31000],
    ['e', 'orgo/gen-oss-120b', 1500, 5500],
    ['e', 'orgo/gen-5.2', 18000, 155000],
    ['e', 'glx-org/glx-4.7', 8500, 33000],
    ['e', 'orgc/sage-mid-4-5', 30000, 155000],
    ['e', 'orgg/twin-3-pro', 12500, 150000],
    ['f', 'deep/deep-v3.2', 2500, 3800],
    ['f', 'orgc/sage-mid-4.5', 30000, 150000],
    ['f', 'orgc/sage-top-4.5', 50000, 250000],
    ['f', 'orgc/sage-low-4.5', 10000, 50000],
    ['f', 'kim/kim-k2.5', 4500, 25000],
    ['f', 'mm/mm-m2.1', 2700, 9500],
    ['f', 'glx/glx-4.7', 4000, 15000],
    ['f', 'gk-org/gk-4-fast', 2000, 5000],
    ['f', 'orgm/ll-3.3-70b-instruct', 9000, 9000],
  ] as const
).map(([l, model, input, output]) => ({ provider: p(l), model, input, output }));

/** Speech synthesis, CU per 1M characters. */
export const TTS_PRICE_PER_M_CHARS = { speechlab: 30000, speechb: 10000 } as const;
/** Speech recognition, CU per minute of audio. */
export const ASR_PRICE_PER_MINUTE = { speechlab: 35, general: 50 } as const;

/** Speech synthesis defaults of the `speechlab` endpoints. */
export const TTS_DEFAULTS = {
  voice: 'JBFqnCBsd6RMkjVDRZzb',
  model: 'speechlab_flash_v2_5',
  response_format: 'mp3_44100_128',
  speed: 1.0,
  minSpeed: 0.5,
  maxSpeed: 2.0,
} as const;

/** Sample rates the recognition sockets accept, and the default. */
export const ASR_RATES = [8000, 16000, 22050, 44100] as const;
export type AsrRate = (typeof ASR_RATES)[number];
export const ASR_DEFAULT_RATE: AsrRate = 16000;
/** Language codes the spec lists; `auto` (or omitted) means automatic detection. */
export const ASR_LANGUAGES = ['en', 'es', 'fr', 'de', 'it', 'pt', 'ja', 'ko', 'zh', 'nl', 'pl', 'ru'] as const;
/** Length of one internal recognition session before it restarts with an `info` event. */
export const ASR_SESSION_MS = 5 * 60 * 1000;

/** Audio seconds of raw s16le mono PCM: bytes / (rate * 2). */
export function pcmSeconds(bytes: number, rate: number): number {
  return bytes / (rate * 2);
}

/** API key prefixes. */
export const KEY_PREFIXES = ['key_live_', 'key_test_'] as const;
export function hasKeyPrefix(key: string): boolean {
  return KEY_PREFIXES.some((k) => key.startsWith(k));
}

/** Key limits per plan. The spec gives starter = 5; the others are our decision (docs/service.md, "Plans"). */
export const PLAN_KEY_LIMITS: Record<string, number> = { free: 2, starter: 5, pro: 20, enterprise: 100 };
