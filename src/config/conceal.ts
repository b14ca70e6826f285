// Keeps secrets out of configuration problems: values that came from variables, and strings shaped like keys, are never echoed.
import { redact } from '../redact.js';

/**
 * Whether a string looks like a credential, so a message describes it instead of quoting it:
 * anything `redact` changes (key_live_/key_test_ keys, JWTs, bearer tokens, sk- keys), a long hex
 * string, or a long token without spaces that mixes upper case, lower case and digits the way random
 * text does. An identifier made of words (`UnitreeGo2LidarLocalization`, a plugin type) is not one:
 * its runs of one character class (upper, lower, digit) average 3 characters or more, where a random
 * base-62 token's average about 1.6.
 */
export function looksLikeSecret(s: string): boolean {
  if (redact(s) !== s) return true;
  const t = s.trim();
  if (/^[0-9a-fA-F]{32,}$/.test(t)) return true;
  if (t.length >= 20 && /^[A-Za-z0-9_\-+/=.~]+$/.test(t)) {
    const classes = [/[a-z]/, /[A-Z]/, /[0-9]/].filter((re) => re.test(t)).length;
    if (classes === 3 && t.length / classRuns(t) < 2.5) return true;
  }
  return false;
}

/** Number of maximal runs of one character class (upper case, lower case, digit, other) in `t`. */
function classRuns(t: string): number {
  const cls = (c: string) => (c >= 'a' && c <= 'z' ? 0 : c >= 'A' && c <= 'Z' ? 1 : c >= '0' && c <= '9' ? 2 : 3);
  let runs = 0;
  let last = -1;
  for (const c of t) {
    const k = cls(c);
    if (k !== last) runs++;
    last = k;
  }
  return runs;
}

export const SECRET_SHAPED = 'a value that looks like a secret (not shown)';

/** What a message says instead of a value taken from variables. */
export function variableLabel(variables: readonly string[]): string {
  return `the value of ${variables.map((v) => `\${${v}}`).join(', ')} (not shown)`;
}

/**
 * Replaces every echo of `value` in `message` by `label`: the value as written or JSON-escaped,
 * inside quotes or not, whole or cut short by a message (`"key_live_abc..."`, at least 4 characters
 * of it). A value shorter than 4 characters is replaced only where it stands quoted (`"on"`), so
 * that `1` does not eat every digit of a message.
 */
export function concealValue(message: string, value: string, label: string): string {
  const needle = JSON.stringify(value).slice(1, -1);
  if (needle.length === 0) return message;
  if (needle.length < 4) return message.split(`"${needle}"`).join(label);
  const headLen = 4;
  const head = needle.slice(0, headLen);
  let out = '';
  let from = 0;
  for (;;) {
    const at = message.indexOf(head, from);
    if (at < 0) break;
    let k = headLen;
    while (k < needle.length && at + k < message.length && message[at + k] === needle[k]) k++;
    let end = at + k;
    const whole = k === needle.length;
    const cut = !whole && message.startsWith('...', end);
    if (!whole && !cut) {
      out += message.slice(from, at + 1);
      from = at + 1;
      continue;
    }
    if (cut) end += 3;
    let start = at;
    if (message[start - 1] === '"' && message[end] === '"') {
      start -= 1;
      end += 1;
    }
    out += message.slice(from, start) + label;
    from = end;
  }
  return out + message.slice(from);
}

/** Replaces quoted strings that look like secrets, then redacts key shapes anywhere in the message. */
export function concealSecretShapes(message: string): string {
  const quoted = message.replace(/"((?:[^"\\]|\\.)*)"/g, (whole, inner: string) => {
    let text: string;
    try {
      text = JSON.parse(whole) as string;
    } catch {
      text = inner;
    }
    return looksLikeSecret(text.replace(/\.\.\.$/, '')) ? SECRET_SHAPED : whole;
  });
  return redact(quoted);
}

/** The values a configuration load must not echo, with what to say instead. */
export class Concealer {
  private readonly values: Array<{ value: string; label: string }> = [];

  /** Registers a value taken from `variables`; empty values have nothing to hide. */
  add(value: string, variables: readonly string[]): void {
    if (value === '' || this.values.some((v) => v.value === value)) return;
    this.values.push({ value, label: variableLabel(variables) });
    // Longest first, so a value that contains another is replaced whole.
    this.values.sort((a, b) => b.value.length - a.value.length);
  }

  /** `message` with every registered value and every secret-shaped string replaced. */
  apply(message: string): string {
    let out = message;
    for (const { value, label } of this.values) out = concealValue(out, value, label);
    return concealSecretShapes(out);
  }
}
