// Secret redaction: keys, JWTs, bearer tokens, URL credentials, secret-named fields and `--password=` arguments never leave the process in text.

const REPLACEMENT = '[REDACTED]';

/**
 * Parts of a name that make it secret wherever they appear in it (case does not matter): `secret`,
 * `password`/`passwd`, `passphrase`, `token` (not the plural: `max_tokens` and `prompt_tokens` are
 * counts), `credential`, `bearer`, `authorization`, and `api`/`access`/`private` + `key`.
 */
const SECRET_PART = /secret|passw(?:or)?d|passphrase|token(?!s)|credential|bearer|authori[sz]ation|(?:api|access|private)[_-]?key/i;

/** Whole words of a name (split at `_`, `-`, `.`, spaces and camelCase) that make it secret. */
const SECRET_WORDS = new Set(['cookie', 'jwt', 'pin', 'pincode', 'passcode', 'pwd', 'otp', 'apikey', 'accesskey', 'privatekey']);

/**
 * Pairs of words that make a name secret: `key` after a qualifier (`signing_key`, `clientKey`,
 * `ssh-key`), `header`/`code` after `auth` (`auth_header`, `authCode`). A bare `auth` is a section
 * (`auth: { max_tokens }`), not a secret.
 */
const SECRET_PAIRS: Record<string, ReadonlySet<string>> = {
  key: new Set(['api', 'access', 'private', 'secret', 'signing', 'encryption', 'auth', 'client', 'master', 'ssh', 'session']),
  header: new Set(['auth']),
  code: new Set(['auth', 'pin', 'pass']),
};

function wordsOf(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w.length > 0);
}

/**
 * True for a field, flag, header or variable name that holds a secret whatever its value looks like.
 * The rule, not a list: a secret part anywhere in the name (SECRET_PART: `client_secret`,
 * `DB_PASSWORD`, `wifi_passphrase`, `authorization_header`, `aws_access_key_id`), a secret word
 * of it (`pin`, `set-cookie`, `jwt`, `otp`), or a secret pair of words (`signing_key`, `x-api-key`,
 * `auth_header`). Names of counts and settings (`max_tokens`, `keyword`,
 * `key_frames`) are not secret.
 */
export function isSecretField(name: string): boolean {
  let secret = verdicts.get(name);
  if (secret === undefined) {
    // Bounded: names come from events and configurations (a few hundred), but a context's keys are anyone's.
    if (verdicts.size >= MAX_VERDICTS) verdicts.clear();
    verdicts.set(name, (secret = judgeField(name)));
  }
  return secret;
}

/** isSecretField's answers by name: a recording or a log asks about the same few field names for every event. */
const verdicts = new Map<string, boolean>();
const MAX_VERDICTS = 4096;

function judgeField(name: string): boolean {
  if (SECRET_PART.test(name)) return true;
  const words = wordsOf(name);
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (SECRET_WORDS.has(w)) return true;
    if (i > 0 && SECRET_PAIRS[w]?.has(words[i - 1]!)) return true;
  }
  return false;
}

/**
 * JSON Web Tokens in `text`: `eyJ...` at a word start, then `.`, a non-empty segment, `.`, a segment
 * (base64url each). Found by one pass over runs of base64url-and-dot characters, split at the dots,
 * so the work is linear in the text: a regular expression with a `[A-Za-z0-9_-]*` before a required
 * `.` backtracks over the whole run from every `eyJ`, quadratic on `eyJ-eyJ-eyJ-...`.
 */
function redactJwts(text: string): string {
  if (!text.includes('eyJ')) return text;
  return text.replace(/[A-Za-z0-9_.-]+/g, (run) => {
    if (!run.includes('eyJ')) return run;
    const parts = run.split('.');
    let out = '';
    let i = 0;
    while (i < parts.length) {
      const part = parts[i]!;
      // The first `eyJ` of this part at a word start (the part's start, or after a `-`).
      let at = -1;
      for (let k = part.indexOf('eyJ'); k >= 0; k = part.indexOf('eyJ', k + 1)) {
        if (k === 0 || part[k - 1] === '-') {
          at = k;
          break;
        }
      }
      if (at >= 0 && i + 2 < parts.length && parts[i + 1]!.length > 0) {
        out += `${part.slice(0, at)}${REPLACEMENT}`;
        i += 3;
        if (i < parts.length) out += '.';
        continue;
      }
      out += part;
      i += 1;
      if (i < parts.length) out += '.';
    }
    return out;
  });
}

/**
 * Patterns of secrets, each with what a text must contain for it to match (`needs`: a plain substring,
 * or a case-insensitive word), so a text is scanned only by the patterns it could hold. Each keeps a
 * recognisable prefix so a reader knows what was removed: `key_live_[REDACTED]`, `Bearer [REDACTED]`,
 * `api_key=[REDACTED]`, `https://[REDACTED]@host`. Every pattern runs in linear time: log lines and
 * chat text pass through here.
 */
const PATTERNS: Array<{ needs: string | RegExp; re: RegExp; rep: string | ((...m: string[]) => string) }> = [
  // API keys of the hosted service: key_live_<secret>, key_test_<secret>.
  { needs: 'key_', re: /\b(key_(?:live|test)_)[A-Za-z0-9_-]+/g, rep: `$1${REPLACEMENT}` },
  // Credentials in URLs: scheme://user:password@host and scheme://token@host lose the whole user part.
  { needs: '://', re: /(?<![a-z0-9+.-])([a-z][a-z0-9+.-]*:\/\/)[^\s/@:"'<>]+(?::[^\s/@"'<>]*)?@/gi, rep: `$1${REPLACEMENT}@` },
  // name=value pairs (query strings, environment assignments) whose name is secret-like.
  // A placeholder such as `api_key=<API_KEY>` in a server's help text is left readable.
  {
    needs: '=',
    re: /(?<![\w.-])([A-Za-z_][\w.-]*=)[^&\s"'#<][^&\s"'#]*/g,
    rep: (whole, name) => (isSecretField(name!.slice(0, -1)) ? `${name}${REPLACEMENT}` : whole),
  },
  // Command-line flags: --password=x, --password x, -token "x y" (flags whose name is secret-like);
  // a placeholder such as `--jwt <token>` in help text is left readable.
  {
    needs: '-',
    re: /(?<![^\s"'])(--?)([A-Za-z][A-Za-z0-9_-]*)(=|[ \t]+)("[^"]*"|'[^']*'|[^\s"'<][^\s"']*)/g,
    rep: (whole, dashes, name, sep) => (isSecretField(name!) ? `${dashes}${name}${sep}${REPLACEMENT}` : whole),
  },
  // JSON text: "password": "x", "client_secret":"x".
  {
    needs: '"',
    re: /"([A-Za-z0-9_.-]+)"(\s*:\s*)"(?:[^"\\]|\\.)*"/g,
    rep: (whole, name, colon) => (isSecretField(name!) ? `"${name}"${colon}"${REPLACEMENT}"` : whole),
  },
  // Authorization headers and bearer tokens in text.
  { needs: /bearer/i, re: /\b(Bearer\s+)[A-Za-z0-9_\-.~+/=]+/gi, rep: `$1${REPLACEMENT}` },
  // Common vendor key shapes that may come from upstream providers (sk-..., long hex secrets after "key").
  { needs: 'sk-', re: /\b(sk-[A-Za-z0-9]{2,})[A-Za-z0-9_-]{8,}/g, rep: `$1${REPLACEMENT}` },
];

/**
 * A text without any of these holds none of the shapes above (each `needs` one of them) nor a JWT
 * (`eyJ`): it is returned after this one scan. Most of what a robot says, hears and logs is such text.
 */
const MAY_HOLD_SECRET = /[=:"-]|key_|eyJ|bearer/i;

const holds = (text: string, needs: string | RegExp) => (typeof needs === 'string' ? text.includes(needs) : needs.test(text));

/** Returns `text` with every known secret shape replaced (JSON Web Tokens first). Idempotent. */
export function redact(text: string): string {
  if (!MAY_HOLD_SECRET.test(text)) return text;
  let out = redactJwts(text);
  for (const { needs, re, rep } of PATTERNS) {
    if (!holds(out, needs)) continue;
    out = typeof rep === 'string' ? out.replace(re, rep) : out.replace(re, rep as (...m: string[]) => string);
  }
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

/**
 * `value` itself when redactDeep would change nothing in it, else redactDeep's copy: what is only
 * read or serialised (a recording's event) skips the copy in the common case of no secret. The
 * check walks as redactDeep does and allocates nothing; anything redactDeep rewrites by its kind (an
 * Error, an object that is not plain, a nesting past its depth) counts as a change.
 */
export function redactedView(value: unknown): unknown {
  return unchanged(value, 0) ? value : redactDeep(value);
}

function unchanged(value: unknown, depth: number): boolean {
  if (depth > 32) return false;
  if (typeof value === 'string') return redact(value) === value;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      if (i > 0 && typeof v === 'string' && isSecretFlag(value[i - 1])) return false;
      if (!unchanged(v, depth + 1)) return false;
    }
    return true;
  }
  if (value && typeof value === 'object') {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const k of Object.keys(value)) {
      const v = (value as Record<string, unknown>)[k];
      if (isSecretField(k) && v !== undefined && v !== '' && v !== null) return false;
      if (!unchanged(v, depth + 1)) return false;
    }
    return true;
  }
  return true;
}
