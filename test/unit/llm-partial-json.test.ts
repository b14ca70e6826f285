// Proves the incremental JSON parser of streamed tool arguments: split at every byte it equals JSON.parse, strings only grow, completion is exact, bad input fails.
import t from 'tap';
import fc from 'fast-check';
import { IncrementalJson, parseIncrementally } from '../../src/cortex/llm/partial-json.js';

const SAMPLES = [
  '{"sentence": "Hello there. How are you? I am Pip, \\"the\\" robot \\u00e9\\ud83d\\ude00 \\n ok."}',
  '{"action":"turn left"}',
  ' { "name" : "kitchen", "lat": -48.1173e0, "lon": 11.5, "tags": [true, false, null, [], {}], "n": 0 } ',
  '[1, -2.5e-3, "x", {"a": {"b": ["c"]}}]',
  '"just a string"',
  '{}',
];

t.test('split at every byte position, the result equals JSON.parse and completes at the closing character', async (t) => {
  for (const text of SAMPLES) {
    const expected = JSON.parse(text);
    const close = text.trimEnd().length; // the character that closes the root value
    for (let cut = 0; cut <= text.length; cut++) {
      const p = new IncrementalJson();
      p.push(text.slice(0, cut));
      t.equal(p.done, cut >= close, `${text.slice(0, 20)}… done only once closed (cut ${cut})`);
      p.push(text.slice(cut));
      p.end();
      t.notOk(p.error, `no error at cut ${cut}`);
      t.same(p.value, expected, `value at cut ${cut}`);
    }
  }
});

t.test('every split into one-character fragments shows strings that only grow, with escapes decoded', async (t) => {
  const text = SAMPLES[0]!;
  const p = new IncrementalJson();
  let last = '';
  for (const ch of text) {
    p.push(ch);
    const s = (p.value as { sentence?: string } | undefined)?.sentence;
    if (s === undefined) continue;
    t.ok(s.startsWith(last), 'the partial sentence is a prefix of the next one');
    last = s;
  }
  t.equal(last, JSON.parse(text).sentence);
  t.ok(p.done);
});

t.test('a key is absent until its value starts; a number until a delimiter ends it', async (t) => {
  const p = new IncrementalJson();
  p.push('{"sentence"');
  t.same(p.value, {});
  p.push(': "Hi');
  t.same(p.value, { sentence: 'Hi' });
  p.push('", "n": 12');
  t.same(p.value, { sentence: 'Hi' }, 'the number may still grow');
  p.push('3}');
  t.same(p.value, { sentence: 'Hi', n: 123 });
  t.ok(p.done);
  const root = new IncrementalJson().push('42');
  t.notOk(root.done, 'a bare number completes only at the end of input');
  t.equal(root.end().value, 42);
  t.ok(root.done);
});

t.test('random JSON values split at random points parse as JSON.parse does (fuzz)', async (t) => {
  fc.assert(
    fc.property(fc.json(), fc.array(fc.nat(), { maxLength: 8 }), (text, cuts) => {
      const points = [...new Set(cuts.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
      const fragments: string[] = [];
      let at = 0;
      for (const c of points) fragments.push(text.slice(at, c)), (at = c);
      fragments.push(text.slice(at));
      const p = parseIncrementally(fragments);
      return !p.error && JSON.stringify(p.value) === JSON.stringify(JSON.parse(text));
    }),
    { seed: 16, numRuns: 2000 },
  );
  t.pass('2000 random values');
});

t.test('invalid input fails with the offset and ignores the rest; so does JSON.parse', async (t) => {
  for (const bad of ['{"a" 1}', '{"a": tru}', '[1,]', '{,}', '{"a": "x\\q"}', '{"a": 1} x', '{"a": "line\nbreak"}', '{"a": 01x}', '{"a": [1 2]}']) {
    const p = parseIncrementally([bad]);
    t.ok(p.error, `${JSON.stringify(bad)} is an error`);
    t.match(p.error?.message ?? '', /at character \d+/);
    t.throws(() => JSON.parse(bad), `${JSON.stringify(bad)} is invalid JSON too`);
  }
  const cut = parseIncrementally(['{"sentence": "unfinished']);
  t.match(cut.error?.message, /unexpected end of input/);
  t.same(cut.value, { sentence: 'unfinished' }, 'what arrived stays readable');
  const proto = parseIncrementally(['{"__proto__": {"x": 1}}']);
  t.equal(Object.getPrototypeOf(proto.value), Object.prototype, 'a __proto__ key is an own member, as with JSON.parse');
  t.same(Object.keys(proto.value as object), ['__proto__']);
});
