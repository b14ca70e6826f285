// Secret redaction: API keys, JWTs, bearer tokens and `api_key=` query values never leave the process in text.

const REPLACEMENT = '[REDACTED]';

/**
 * Patterns of secrets. Each keeps a recognisable prefix so a reader knows what was removed:
 * `key_live_[REDACTED]`, `Bearer [REDACTED]`, `api_key=[REDACTED]`.
 */
const PATTERNS: Array<[RegExp, string]> = [
  // API keys of the hosted service: key_live_<secret>, key_test_<secret>.
  [/\b(key_(?:live|test)_)[A-Za-z0-9_\-]+/g, `$1${REPLACEMENT}`],
  // JSON Web Tokens: three base64url segments, the first starting with eyJ ({"...).
  [/\beyJ[A-Za-z0-9_\-]*\.[A-Za-z0-9_\-]+\.[A-Za-z0-9_\-]*/g, REPLACEMENT],
  // api_key / apikey / token / jwt query parameters and key=value pairs.
  // A placeholder such as `api_key=<API_KEY>` in a server's help text is left readable.
  [/\b((?:api_?key|token|jwt|access_token|speechlab_api_key)=)[^&\s"'#<][^&\s"'#]*/gi, `$1${REPLACEMENT}`],
  // Authorization headers and bearer tokens in text.
  [/\b(Bearer\s+)[A-Za-z0-9_\-.~+/=]+/gi, `$1${REPLACEMENT}`],
  // Common vendor key shapes that may come from upstream providers (sk-..., long hex secrets after "key").
  [/\b(sk-[A-Za-z0-9]{2,})[A-Za-z0-9_\-]{8,}/g, `$1${REPLACEMENT}`],
];

/** Returns `text` with every known secret shape replaced. Idempotent. */
export function redact(text: string): string {
  let out = text;
  for (const [re, rep] of PATTERNS) out = out.replace(re, rep);
  return out;
}

/** Field names whose values are always secrets, whatever they look like. */
export const SECRET_FIELDS = [
  'api_key',
  'apiKey',
  'authorization',
  'Authorization',
  'x-api-key',
  'jwt',
  'token',
  'password',
  'secret',
  'speechlab_api_key',
];

/** Deep-copies `value` with secret fields blanked and secret shapes redacted in every string. */
export function redactDeep(value: unknown, depth = 0): unknown {
  if (depth > 32) return '[depth]';
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, depth + 1));
  if (value && typeof value === 'object') {
    if (value instanceof Error) {
      const code = (value as { code?: unknown }).code;
      return { name: value.name, message: redact(value.message), ...(code !== undefined ? { code } : {}) };
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = SECRET_FIELDS.includes(k) && v !== undefined && v !== '' ? REPLACEMENT : redactDeep(v, depth + 1);
    }
    return out;
  }
  return value;
}
