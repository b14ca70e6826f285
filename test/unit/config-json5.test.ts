// The JSON5 fast path gives what json5 gives, value or error, on the shipped configurations, on edge cases and on thousands of mutated files.
import t from 'tap';
import JSON5 from 'json5';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseJson5, toJson } from '../../src/config/json5.js';
import { projectRoot } from '../../src/paths.js';

const CONFIG = join(projectRoot(), 'config');
const shipped = readdirSync(CONFIG)
  .filter((f) => f.endsWith('.json5'))
  .map((f) => ({ name: f, text: readFileSync(join(CONFIG, f), 'utf8') }));

type Outcome = ({ value: unknown } | { error: string }) & { warnings: unknown[][] };
/** What a parse gives, with what it printed through console.warn (json5 warns about U+2028 in strings). */
const outcome = (parse: (text: string) => unknown, text: string): Outcome => {
  const warn = console.warn;
  const warnings: unknown[][] = [];
  console.warn = (...args: unknown[]) => warnings.push(args);
  try {
    return { value: parse(text), warnings };
  } catch (err) {
    return { error: `${(err as Error).constructor.name}: ${(err as Error).message}`, warnings };
  } finally {
    console.warn = warn;
  }
};
/** Same value (key order, -0 and own `__proto__` keys included) or the same error. */
const same = (a: Outcome, b: Outcome) =>
  JSON.stringify(a.warnings) === JSON.stringify(b.warnings) &&
  ('error' in a || 'error' in b
    ? JSON.stringify(a) === JSON.stringify(b)
    : isDeepStrictEqual(a.value, b.value) && JSON.stringify(a.value) === JSON.stringify(b.value));

t.test('every shipped configuration takes the fast path and reads as json5 reads it', async (t) => {
  t.ok(shipped.length >= 3, 'config/ has files');
  for (const { name, text } of shipped) {
    t.not(toJson(text), undefined, `${name}: in the shared subset`);
    t.ok(same(outcome(parseJson5, text), outcome(JSON5.parse, text)), name);
  }
});

t.test('edge cases: what json5 reads differently from JSON goes to json5', async (t) => {
  const cases = [
    `{a: 1, b: 'two', "c": [1, 2, 3,], }`,
    `// only a comment\n{ x: 1 }`,
    `{ x: /* inline */ 2 /* after */ }`,
    `{ a: 'it\\'s', b: "say \\"hi\\"", c: 'a "quoted" word', d: "\\u00e9\\n\\t\\/" }`,
    `{ a: 0x10, b: +1, c: .5, d: 5., e: Infinity, f: -Infinity, g: NaN, h: -0, i: 1e400 }`,
    `{ a: '\\x41', b: '\\v', c: '\\0', d: 'line\\\ncontinued', e: '\\a' }`,
    `[,]`,
    `{,}`,
    `[1,,]`,
    `[1 2]`,
    `{a: foo}`,
    `{a: 1 b: 2}`,
    `[1, a: 2]`,
    `{true: 1, null: 2, if: 3}`,
    `{ __proto__: { polluted: true }, "__proto__": 1 }`,
    `{ a: 1, a: 2 }`,
    `{ é: 1 }`,
    `{\u00a0a: 1 }`,
    `\ufeff{ a: 1 }`,
    `{ a: "tab\there" }`,
    `{ a: 'raw\ttab' }`,
    `{ a: "line\u2028sep" }`,
    `{ a: 1 } // trailing\u2028`,
    `{ a: 1 } /* open`,
    `{ a: 1 } /`,
    `{ a: "unterminated }`,
    ``,
    `   `,
    `{ a: 1 } extra`,
    `"just a string"`,
    `[1, 2, 3]`,
    `{ $a_1: { _b: [ { c$: null } ] } }`,
    `{ a: 1_000 }`,
    `{ a: '\\u12' }`,
    `{ a: 1, }, `,
  ];
  // Named in ASCII: a raw U+2028 in a test's name would end the TAP line.
  const named = (text: string) => JSON.stringify(text).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  for (const text of cases) t.ok(same(outcome(parseJson5, text), outcome(JSON5.parse, text)), named(text));
});

t.test('mutated configurations: the same value or the same error as json5, every time', async (t) => {
  // A fixed seed: the same 1500 mutants every run.
  let seed = 29;
  const random = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const pieces = [
    ',',
    ':',
    '{',
    '}',
    '[',
    ']',
    "'",
    '"',
    '\\',
    '/',
    '*',
    '\n',
    ' ',
    '0x',
    '+',
    '-',
    '.',
    'e',
    '_',
    '$',
    'a',
    'NaN',
    'Infinity',
    '\u2028',
    '\t',
    '//',
    '/*',
    '*/',
    'é',
    '\u00a0',
  ];
  const base = shipped.map((s) => s.text);
  const differ: string[] = [];
  let fast = 0;
  for (let n = 0; n < 1500; n++) {
    let text = base[random(base.length)]!;
    for (let edits = 1 + random(3); edits > 0; edits--) {
      const at = random(text.length);
      const kind = random(3);
      if (kind === 0) text = text.slice(0, at) + text.slice(at + 1 + random(4));
      else if (kind === 1) text = text.slice(0, at) + pieces[random(pieces.length)] + text.slice(at);
      else text = text.slice(0, at) + text.slice(random(text.length), random(text.length)) + text.slice(at);
    }
    if (toJson(text) !== undefined) fast++;
    if (!same(outcome(parseJson5, text), outcome(JSON5.parse, text))) differ.push(text);
  }
  t.same(differ.slice(0, 3), [], 'no mutant reads differently');
  t.ok(fast > 300, `the fast path was tried on ${fast} of them`);
});
