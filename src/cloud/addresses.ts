// The four addresses of the hosted API: read from config or environment, validated, `embedded` kept apart until the local service runs.
import { ConfigError, type ConfigIssue } from '../errors.js';

/** The value that means "start the local service in-process and use its addresses". */
export const EMBEDDED = 'embedded' as const;
export type Embedded = typeof EMBEDDED;

export const ADDRESS_KEYS = ['base_url', 'ws_base_url', 'asr_ws_url', 'vlm_ws_url'] as const;
export type AddressKey = (typeof ADDRESS_KEYS)[number];

/** Environment variable of each address; it wins over the configuration file when set and non-empty. */
export const ADDRESS_ENV: Record<AddressKey, string> = {
  base_url: 'CORTEX_BASE_URL',
  ws_base_url: 'CORTEX_WS_BASE_URL',
  asr_ws_url: 'CORTEX_ASR_WS_URL',
  vlm_ws_url: 'CORTEX_VLM_WS_URL',
};

/**
 * Defaults when neither config nor environment names an address. The spec does not show the hosted
 * addresses, so these are placeholders under the reserved `.invalid` TLD (RFC 2606): they never resolve,
 * and `isPlaceholder` lets `cortexd check` say "set service.base_url or CORTEX_BASE_URL" before start.
 */
export const DEFAULT_ADDRESSES: Record<AddressKey, string> = {
  base_url: 'https://api.cortex-hosted.invalid',
  ws_base_url: 'wss://api.cortex-hosted.invalid',
  asr_ws_url: 'wss://asr.cortex-hosted.invalid/asr',
  vlm_ws_url: 'wss://vlm.cortex-hosted.invalid/vlm',
};

/** Addresses as configured: each is a validated URL or `embedded` (not yet bound to a port). */
export type AddressSettings = Record<AddressKey, string | Embedded>;

/** Addresses a client can dial: every `embedded` replaced by the running local service's URL. */
export type ResolvedAddresses = Record<AddressKey, string> & { readonly __resolved: true };

/** The URLs a running local service answers on (shape of the service's RunningService). */
export interface EmbeddedUrls {
  url: string;
  wsUrl: string;
  asrWsUrl: string;
  vlmWsUrl: string;
}

const SCHEMES: Record<AddressKey, readonly string[]> = {
  base_url: ['http:', 'https:'],
  ws_base_url: ['ws:', 'wss:'],
  asr_ws_url: ['ws:', 'wss:'],
  vlm_ws_url: ['ws:', 'wss:'],
};

/** Problem with one address value, or undefined when it is usable. */
export function checkAddress(key: AddressKey, value: string): string | undefined {
  if (value === EMBEDDED) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `not a URL: "${value}" (expected ${SCHEMES[key].map((s) => s.replace(':', '://')).join(' or ')}... or "embedded")`;
  }
  if (!SCHEMES[key].includes(url.protocol)) {
    return `scheme ${url.protocol.replace(':', '')} is not allowed here (expected ${SCHEMES[key].map((s) => s.replace(':', '')).join(' or ')}, or "embedded")`;
  }
  if (url.search.includes('api_key')) return 'must not carry api_key: the client adds the key itself';
  if (url.username || url.password) return 'must not carry credentials';
  return undefined;
}

/** Turns an http(s) base into the ws(s) base on the same host. */
export function wsFromHttp(base: string): string {
  return base.replace(/^http(s?):/, 'ws$1:');
}

/**
 * Reads the four addresses. Order per address: environment variable, then `service.<key>` of the
 * configuration, then a derived value, then the placeholder default. Derivations: `ws_base_url` follows
 * `base_url` (http->ws, https->wss; `embedded` stays `embedded`); `asr_ws_url` and `vlm_ws_url` become
 * `embedded` when `base_url` is. Throws ConfigError listing every bad value.
 */
export function readAddresses(
  service: Partial<Record<AddressKey, string | undefined>> = {},
  env: Record<string, string | undefined> = process.env,
  file = 'service',
): AddressSettings {
  const pick = (key: AddressKey): { value: string | undefined; from: string } => {
    const e = env[ADDRESS_ENV[key]];
    if (e !== undefined && e.trim() !== '') return { value: e.trim(), from: ADDRESS_ENV[key] };
    const c = service[key];
    if (c !== undefined && c.trim() !== '') return { value: c.trim(), from: `service.${key}` };
    return { value: undefined, from: key };
  };
  const issues: ConfigIssue[] = [];
  const out = {} as AddressSettings;
  const picked = Object.fromEntries(ADDRESS_KEYS.map((k) => [k, pick(k)])) as Record<AddressKey, { value: string | undefined; from: string }>;
  const base = picked.base_url.value ?? DEFAULT_ADDRESSES.base_url;
  for (const key of ADDRESS_KEYS) {
    let value = picked[key].value;
    if (value === undefined) {
      if (base === EMBEDDED) value = EMBEDDED;
      else if (key === 'ws_base_url' && picked.base_url.value !== undefined) value = wsFromHttp(base);
      else value = DEFAULT_ADDRESSES[key];
    }
    const problem = checkAddress(key, value);
    if (problem) issues.push({ file, path: picked[key].from, message: problem, kind: 'format' });
    out[key] = value === EMBEDDED ? EMBEDDED : value.replace(/\/+$/, '');
  }
  if (issues.length) throw new ConfigError(issues);
  return out;
}

/** True when any address asks for the in-process local service. */
export function needsEmbedded(settings: AddressSettings): boolean {
  return ADDRESS_KEYS.some((k) => settings[k] === EMBEDDED);
}

/** Addresses still set to the `.invalid` placeholders (nothing was configured for them). */
export function placeholders(settings: AddressSettings): AddressKey[] {
  return ADDRESS_KEYS.filter((k) => settings[k] !== EMBEDDED && settings[k].includes('.invalid'));
}

/** Replaces every `embedded` with the URL of the running local service. */
export function bindEmbedded(settings: AddressSettings, running: EmbeddedUrls): ResolvedAddresses {
  const map: Record<AddressKey, string> = {
    base_url: running.url,
    ws_base_url: running.wsUrl,
    asr_ws_url: running.asrWsUrl,
    vlm_ws_url: running.vlmWsUrl,
  };
  const out = {} as Record<AddressKey, string>;
  for (const k of ADDRESS_KEYS) out[k] = (settings[k] === EMBEDDED ? map[k] : settings[k]).replace(/\/+$/, '');
  return out as ResolvedAddresses;
}

/** The settings as dialable addresses; throws when one is still `embedded` (start the service first). */
export function requireResolved(settings: AddressSettings): ResolvedAddresses {
  const pending = ADDRESS_KEYS.filter((k) => settings[k] === EMBEDDED);
  if (pending.length) {
    throw new ConfigError(
      pending.map((k) => ({
        file: 'service',
        path: k,
        message: '"embedded" needs the local service started first (bindEmbedded)',
        kind: 'reference' as const,
      })),
    );
  }
  return settings as ResolvedAddresses;
}
