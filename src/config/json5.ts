// Parses a configuration's JSON5: the subset configurations are written in goes through JSON.parse, anything else (and every error) through json5.
import { createRequire } from 'node:module';
import type JSON5 from 'json5';

/*
 * json5's parser reads a character at a time: 6-11 ms of CPU for the 9 KB config/default.json5,
 * a tenth of what `cortexd check` may take above a bare node start (issue 29). Most files use
 * only comments, unquoted keys, single quotes and trailing commas, which map one to one onto
 * JSON, and V8's JSON.parse reads that in well under a millisecond. `toJson` rewrites only that
 * subset, token by token, and gives up on anything else (hex or signed numbers, Infinity, escapes
 * JSON lacks, an unquoted word that is not a key); JSON.parse then checks the structure. Whenever
 * either gives up, json5 parses the original text, so values, and errors with their line and
 * column, are json5's own.
 */

/** The value of a JSON5 text, as JSON5.parse gives it; throws what JSON5.parse throws. */
export function parseJson5(text: string): unknown {
  const json = toJson(text);
  if (json !== undefined) {
    try {
      return JSON.parse(json);
    } catch {
      // Outside the subset after all (a missing comma, a raw tab in a string): json5 decides and words the error.
    }
  }
  // json5 (CommonJS, 4 ms to load) only when needed.
  return (createRequire(import.meta.url)('json5') as typeof JSON5).parse(text);
}

const isIdStart = (c: number) => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
const isIdPart = (c: number) => isIdStart(c) || (c >= 48 && c <= 57);
/** Where a `//` comment ends: \n, \r, U+2028, U+2029. */
const isLineEnd = (c: number) => c === 10 || c === 13 || c === 0x2028 || c === 0x2029;
/** Escapes JSON and JSON5 share (after the backslash): " \ / b f n r t u. */
const SHARED_ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't', 'u']);

/** The index of the next character after spaces and comments from `i` (text.length at the end); -1 on an unterminated comment. */
function skipBlank(text: string, i: number): number {
  while (i < text.length) {
    const c = text[i];
    if (c === ' ' || c === '\t' || c === '\n' || c === '\r') i++;
    else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && !isLineEnd(text.charCodeAt(i))) i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end < 0) return -1;
      i = end + 2;
    } else break;
  }
  return i;
}

/**
 * JSON for a JSON5 text in the shared subset, or undefined. Whitespace and comments become one space,
 * so no two tokens merge. A comma is held until the next token: dropped before `}` or `]` when it
 * follows a value (a trailing comma), written otherwise (`[,]` stays, for JSON.parse to refuse).
 */
export function toJson(text: string): string | undefined {
  let out = '';
  /** The last token's last character ('' at the start), the comma held back included. */
  let last = '';
  let comma = false;
  /** The token before the held comma. */
  let beforeComma = '';
  const emit = (token: string) => {
    if (comma) out += ',';
    comma = false;
    out += token;
    last = token[token.length - 1]!;
  };
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    const ch = text[i]!;
    if (ch === ' ' || ch === '\t' || ch === '\n' || ch === '\r' || ch === '/') {
      const next = skipBlank(text, i);
      if (next < 0 || next === i) return undefined; // an unterminated comment, or a lone slash
      out += ' ';
      i = next;
    } else if (ch === ',') {
      if (comma) out += ',';
      comma = true;
      beforeComma = last;
      last = ',';
      i++;
    } else if (ch === '"' || ch === "'") {
      let s = '"';
      let j = i + 1;
      for (;;) {
        if (j >= text.length) return undefined;
        const d = text[j]!;
        if (d === ch) break;
        if (d === '\\') {
          const e = text[j + 1] ?? '';
          if (e === "'") s += "'";
          else if (SHARED_ESCAPES.has(e)) s += `\\${e}`;
          else return undefined; // \v, \0, \x.., a line continuation: json5's own reading
          j += 2;
        } else if (d === '\u2028' || d === '\u2029') {
          return undefined; // json5 reads it and warns about it: its job
        } else {
          s += d === '"' ? '\\"' : d;
          j++;
        }
      }
      emit(`${s}"`);
      i = j + 1;
    } else if (isIdStart(c)) {
      let j = i + 1;
      while (j < text.length && isIdPart(text.charCodeAt(j))) j++;
      const word = text.slice(i, j);
      if (word === 'true' || word === 'false' || word === 'null') emit(word);
      else {
        // An unquoted key: only right after `{` or `,` and right before `:`; any other word is json5's to judge.
        const after = skipBlank(text, j);
        if ((last !== '{' && last !== ',') || after < 0 || text[after] !== ':') return undefined;
        emit(`"${word}"`);
      }
      i = j;
    } else if (ch === '}' || ch === ']') {
      if (comma && beforeComma !== '' && beforeComma !== '[' && beforeComma !== '{' && beforeComma !== ',') comma = false;
      emit(ch);
      i++;
    } else if (c > 127)
      return undefined; // unicode spaces and identifiers: json5's reading
    else {
      emit(ch);
      i++;
    }
  }
  if (comma) out += ',';
  return out;
}
