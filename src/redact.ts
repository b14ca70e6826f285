// Secret redaction: keys, JWTs, bearer tokens, URL credentials, secret-named fields and `--password=` arguments never leave the process in text.

const REPLACEMENT = '[REDACTED]';

/**
 * A field, flag or variable name that holds a secret whatever its value looks like: any name
 * containing `secret`, `password`/`passwd`, `token` (not the plural: `max_tokens` and
 * `prompt_tokens` are counts), `credential`, `private_key` or `api_key`/`apikey`/`api-key`, and
 * the header names `authorization`, `x-api-key`, `cookie`, `jwt`. Case does not matter.
 */
const SECRET_NAME = /secret|passw(?:or)?d|token(?!s)|credential|private[_-]?key|api[_-]?key|^authorization$|^(?:set-)?cookie$|^jwt$/i;

export function isSecretField(name: string): boolean {
  return SECRET_NAME.test(name);
}

/**
 * Patterns of secrets. Each keeps a recognisable prefix so a reader knows what was removed:
 * `key_live_[REDACTED]`, `Bearer [REDACTED]`, `api_key=[REDACTED]`, `https://[REDACTED]@host`.
 * Every pattern runs in linear time: log lines and chat text pass through here.
 */
const PATTERNS: Array<[RegExp, string | ((...m: string[]) => string)]> = [
  // API keys of the hosted service: key_live_<secret>, key_test_<secret>.
  [/\b(key_(?:live|test)_)[A-Za-z0-9_-]+/g, `$1${REPLACEMENT}`],
  // JSON Web Tokens: three base64url segments, the first starting with eyJ ({"...).
  [/\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g, REPLACEMENT],
  // Credentials in URLs: scheme://user:password@host and scheme://token@host lose the whole user part.
  [/(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)[^\s/@:"'<>]+(?::[^\s/@"'<>]*)?@/gi, `$1${REPLACEMENT}@`],
  // name=value pairs (query strings, environment assignments) whose name is secret-like.
  // A placeholder such as `api_key=<API_KEY>` in a server's help text is left readable.
  [/(?<![\w.-])([A-Za-z_][\w.-]*=)[^&\s"'#<][^&\s"'#]*/g, (whole, name) => (isSecretField(name!.slice(0, -1)) ? `${name}${REPLACEMENT}` : whole)],
  // Command-line flags: --password=x, --password x, -token "x y" (flags whose name is secret-like);
  // a placeholder such as `--jwt <token>` in help text is left readable.
  [
    /(?<![^\s"'])(--?)([A-Za-z][A-Za-z0-9_-]*)(=|[ \t]+)("[^"]*"|'[^']*'|[^\s"'<][^\s"']*)/g,
    (whole, dashes, name, sep) => (isSecretField(name!) ? `${dashes}${name}${sep}${REPLACEMENT}` : whole),
  ],
  // JSON text: "password": "x", "client_secret":"x".
  [/"([A-Za-z0-9_.-]+)"(\s*:\s*)"(?:[^"\\]|\\.)*"/g, (whole, name, colon) => (isSecretField(name!) ? `"${name}"${colon}"${REPLACEMENT}"` : whole)],
  // Authorization headers and bearer tokens in text.
  [/\b(Bearer\s+)[A-Za-z0-9_\-.~+/=]+/gi, `$1${REPLACEMENT}`],
  // Common vendor key shapes that may come from upstream providers (sk-..., long hex secrets after "key").
  [/\b(sk-[A-Za-z0-9]{2,})[A-Za-z0-9_-]{8,}/g, `$1${REPLACEMENT}`],
];

/** Returns `text` with every known secret shape replaced. Idempotent. */
export function redact(text: string): string {
  let out = text;
  for (const [re, rep] of PATTERNS) out = typeof rep === 'string' ? out.replace(re, rep) : out.replace(re, rep as (...m: string[]) => string);
  return out;
}

const NAMED_FIELDS = ['api_key', 'apiKey', 'authorization', 'Authorization', 'x-api-key', 'jwt', 'token', 'password', 'secret', 'speechlab_api_key'];

/**
 * Field names whose values are always secrets. `SECRET_FIELDS.includes(name)` applies the whole
 * rule of isSecretField (so `client_secret`, `db_password`, `refresh_token` count), not only the
 * names listed: callers that test membership (the inspector) get the rule without changing.
 */
export const SECRET_FIELDS: readonly string[] = Object.assign([...NAMED_FIELDS], {
  includes: (name: string): boolean => isSecretField(name),
});

/** `--password`, `-token`: a flag whose value is the next argument of a list. */
function isSecretFlag(arg: unknown): boolean {
  return typeof arg === 'string' && /^--?[A-Za-z][A-Za-z0-9_-]*$/.test(arg) && isSecretField(arg.replace(/^-+/, ''));
}

/**
 * Deep-copies `value` with secret fields blanked and secret shapes redacted in every string. In a
 * list of arguments, the element after a secret flag (`["--password", "x"]`) is blanked too.
 */
export function redactDeep(value: unknown, depth = 0): unknown {
  if (depth > 32) return '[depth]';
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v, i) => (i > 0 && typeof v === 'string' && isSecretFlag(value[i - 1]) ? REPLACEMENT : redactDeep(v, depth + 1)));
  if (value && typeof value === 'object') {
    if (value instanceof Error) {
      const code = (value as { code?: unknown }).code;
      return { name: value.name, message: redact(value.message), ...(code !== undefined ? { code } : {}) };
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = isSecretField(k) && v !== undefined && v !== '' && v !== null ? REPLACEMENT : redactDeep(v, depth + 1);
    }
    return out;
  }
  return value;
}
