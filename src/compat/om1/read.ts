// Reads an OM1 file's text as OM1's Go loader does: placeholders outside strings expanded before parsing, duplicate keys found, prototype keys dropped.
import JSON5 from 'json5';

/** What reading the text changed or noticed, one line each (the report's translations). */
export interface Om1Text {
  raw: Record<string, unknown>;
  notes: string[];
}

/** OM1's placeholder: `${NAME}` or `${NAME:-default}` (the default ends at the first `}`). */
const PLACEHOLDER = /\$\{([^}:-]+)(?::-(.*?))?\}/g;

/** Keys that would reach an object's prototype: never honoured in a configuration. */
export const PROTO_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** The value OM1 puts in place of a placeholder: the variable unless it is unset or empty, else the default. */
function expand(name: string, fallback: string | undefined, env: Record<string, string | undefined>): string {
  const value = env[name];
  return value !== undefined && value !== '' ? value : (fallback ?? '');
}

/**
 * Walks JSON5 text and calls `visit` for each run outside string literals and comments (with its
 * offset). Strings keep their `${VAR}` for the native loader, which substitutes them the same way.
 */
function outsideStrings(text: string, visit: (start: number, end: number) => void): void {
  let i = 0;
  let runStart = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '"' || c === "'") {
      visit(runStart, i);
      i++;
      while (i < text.length && text[i] !== c) i += text[i] === '\\' ? 2 : 1;
      runStart = ++i;
    } else if (c === '/' && text[i + 1] === '/') {
      visit(runStart, i);
      while (i < text.length && text[i] !== '\n') i++;
      runStart = i;
    } else if (c === '/' && text[i + 1] === '*') {
      visit(runStart, i);
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
      runStart = i;
    } else i++;
  }
  visit(runStart, text.length);
}

/** Expands the placeholders that stand outside strings (`use_sim: ${USE_SIM:-false}`): their values are JSON5 text. */
export function expandBare(text: string, env: Record<string, string | undefined>, notes: string[]): string {
  const runs: Array<[number, number]> = [];
  outsideStrings(text, (s, e) => {
    if (e > s) runs.push([s, e]);
  });
  let out = '';
  let last = 0;
  for (const [s, e] of runs) {
    const part = text.slice(s, e);
    if (!part.includes('${')) continue;
    out += text.slice(last, s);
    out += part.replace(PLACEHOLDER, (whole: string, name: string, fallback: string | undefined) => {
      const value = expand(name.trim(), fallback, env);
      const line = text.slice(0, s).split('\n').length + part.slice(0, part.indexOf(whole)).split('\n').length - 1;
      notes.push(
        `line ${line}: ${whole} -> ${value === '' ? '(nothing)' : value} (a placeholder outside quotes: expanded before parsing, as OM1's loader does; an empty variable counts as unset)`,
      );
      return value;
    });
    last = e;
  }
  return out + text.slice(last);
}

/** The keys each object of the text gives more than once, as `PATH: KEY` (JSON5 keeps the last, as OM1's loader does). */
export function duplicateKeys(text: string): string[] {
  const found: string[] = [];
  // A small scanner over JSON5 tokens: strings, identifiers, punctuation; comments skipped.
  const stack: Array<{ kind: '{' | '['; keys: Set<string>; path: string; index: number; key?: string; expectKey: boolean }> = [];
  const childPath = () => {
    const top = stack.at(-1);
    if (!top) return '';
    return top.kind === '{' ? (top.path ? `${top.path}.${top.key}` : String(top.key)) : `${top.path}[${top.index}]`;
  };
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
      continue;
    }
    if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
      continue;
    }
    const top = stack.at(-1);
    let token: string | undefined;
    if (c === '"' || c === "'") {
      let j = i + 1;
      let value = '';
      while (j < text.length && text[j] !== c) {
        if (text[j] === '\\') {
          value += text[j + 1] ?? '';
          j += 2;
        } else value += text[j++];
      }
      token = value;
      i = j + 1;
    } else if (/[A-Za-z_$]/.test(c)) {
      const m = /^[A-Za-z0-9_$]+/.exec(text.slice(i, i + 200))!;
      token = m[0];
      i += token.length;
    }
    if (token !== undefined) {
      if (top?.kind === '{' && top.expectKey) {
        if (top.keys.has(token)) found.push(`${top.path ? `${top.path}.` : ''}${token}`);
        top.keys.add(token);
        top.key = token;
        top.expectKey = false;
      }
      continue;
    }
    if (c === '{' || c === '[') {
      stack.push({ kind: c, keys: new Set(), path: childPath(), index: 0, expectKey: c === '{' });
    } else if (c === '}' || c === ']') {
      stack.pop();
    } else if (c === ',' && top) {
      if (top.kind === '{') top.expectKey = true;
      else top.index++;
    }
    i++;
  }
  return found;
}

/** A copy of parsed JSON with every `__proto__`, `constructor` and `prototype` key left out (each named in `dropped`). */
export function withoutProtoKeys(value: unknown, path: string, dropped: string[]): unknown {
  if (Array.isArray(value)) return value.map((v, i) => withoutProtoKeys(v, `${path}[${i}]`, dropped));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const p = path ? `${path}.${k}` : k;
    if (PROTO_KEYS.has(k)) {
      dropped.push(p);
      continue;
    }
    Object.defineProperty(out, k, { value: withoutProtoKeys(v, p, dropped), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Reads OM1 text: bare placeholders expanded with `env` (OM1 expands every placeholder over the raw
 * text; those inside strings are left to the native loader, which substitutes them the same way),
 * then parsed as JSON5 (quoted and bare keys; a key given twice keeps its last value, as Go's
 * encoding/json does). Throws JSON5's SyntaxError on text that does not parse.
 */
export function readOm1Text(text: string, env: Record<string, string | undefined>): Om1Text {
  const notes: string[] = [];
  const expanded = expandBare(text, env, notes);
  const parsed: unknown = JSON5.parse(expanded);
  for (const key of duplicateKeys(expanded)) notes.push(`${key}: given more than once; the last one is used (as OM1's loader does)`);
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { raw: parsed as Record<string, unknown>, notes };
  const dropped: string[] = [];
  const raw = withoutProtoKeys(parsed, '', dropped) as Record<string, unknown>;
  for (const p of dropped) notes.push(`${p}: ignored (a key that would reach an object's prototype is never read from a configuration)`);
  return { raw, notes };
}
