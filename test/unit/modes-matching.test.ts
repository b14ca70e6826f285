// Proves keyword matching (case, NFKC, diacritics, whole words and phrases), context conditions and command splitting.
import t from 'tap';
import { compileKeyword, findKeyword, normaliseText, words } from '../../src/modes/keywords.js';
import { conditionsHold } from '../../src/modes/conditions.js';
import { fillPlaceholders, splitArgv } from '../../src/config/hook-argv.js';

const hit = (text: string, ...kws: string[]) => findKeyword(text, kws.map(compileKeyword));

t.test('keywords are case-insensitive and whole-word', async (t) => {
  t.equal(hit('Please STOP.', 'stop'), 'stop');
  t.equal(hit('where is my stopwatch', 'stop'), undefined, 'no match inside a longer word');
  t.equal(hit('nonstop music', 'stop'), undefined);
  t.equal(hit("don't stop", "don't"), "don't", 'inner apostrophes belong to the word');
  t.equal(hit('I don’t know', "don't"), "don't", 'typographic apostrophe equals the ASCII one');
});

t.test('phrases match across whitespace and punctuation but not across other words', async (t) => {
  t.equal(hit('Tell, me a story', 'tell me'), 'tell me');
  t.equal(hit('tell\n  me', 'tell me'), 'tell me');
  t.equal(hit('tell them about me', 'tell me'), undefined);
  t.equal(hit('go to the kitchen', 'go-to'), 'go-to', 'punctuation in a keyword separates words too');
});

t.test('Unicode: NFKC folds compatibility forms; diacritics are ignored', async (t) => {
  t.equal(hit('ＳＴＯＰ now', 'stop'), 'stop', 'full-width letters');
  t.equal(hit('ﬁnd me', 'find'), 'find', 'ligature');
  t.equal(hit('Un CAFÉ por favor', 'cafe'), 'cafe');
  t.equal(hit('un cafe', 'café'), 'café');
  t.equal(hit('cafe\u0301', 'café'), 'café', 'decomposed accents');
  t.equal(normaliseText('Straße'), 'straße');
});

t.test('scripts without spaces match per character sequence', async (t) => {
  t.same(words('请停止移动'), ['请', '停', '止', '移', '动']);
  t.equal(hit('请停止移动', '停止'), '停止');
  t.equal(hit('请停下', '停止'), undefined);
});

t.test('first keyword in list order is reported; empty keywords never match', async (t) => {
  t.equal(hit('chat and talk', 'talk', 'chat'), 'talk');
  t.equal(hit('anything', '...'), undefined);
});

t.test('context conditions: equality, membership, min/max, contains, one_of, not', async (t) => {
  const ctx = { battery: 15, name: 'Alice Smith', tags: ['red', 'blue'], docked: false, nothing: null };
  t.ok(conditionsHold({ docked: false }, ctx));
  t.notOk(conditionsHold({ battery: '15' }, ctx), 'no coercion');
  t.ok(conditionsHold({ battery: [10, 15] }, ctx));
  t.notOk(conditionsHold({ battery: [10, 20] }, ctx));
  t.ok(conditionsHold({ battery: { min: 10, max: 15 } }, ctx), 'bounds inclusive');
  t.notOk(conditionsHold({ battery: { min: 16 } }, ctx));
  t.notOk(conditionsHold({ name: { max: 3 } }, ctx), 'non-numbers fail min/max');
  t.ok(conditionsHold({ name: { contains: 'alice' } }, ctx), 'contains is case-insensitive on strings');
  t.ok(conditionsHold({ tags: { contains: 'blue' } }, ctx), 'contains on lists');
  t.notOk(conditionsHold({ tags: { contains: 'green' } }, ctx));
  t.ok(conditionsHold({ battery: { one_of: [1, 15] } }, ctx));
  t.ok(conditionsHold({ battery: { not: { min: 20 } } }, ctx));
  t.notOk(conditionsHold({ docked: { not: false } }, ctx));
  t.ok(conditionsHold({ missing: null, nothing: null }, ctx), 'null matches absent or null');
  t.notOk(conditionsHold({ missing: false }, ctx), 'absent keys fail equality');
  t.ok(conditionsHold({ missing: { not: true } }, ctx), 'absent satisfies not');
  t.notOk(conditionsHold({ battery: 15, docked: true }, ctx), 'all conditions must hold');
  t.notOk(conditionsHold({}, ctx), 'an empty set never holds');
});

t.test('command splitting: quotes, escapes, no shell', async (t) => {
  t.same(splitArgv(`notify-send  "Mode changed" 'to {to_mode}'`), ['notify-send', 'Mode changed', 'to {to_mode}']);
  t.same(splitArgv(`a "b \\"c\\" d" e\\ f ''`), ['a', 'b "c" d', 'e f', '']);
  t.same(splitArgv(`echo $HOME ~ *`), ['echo', '$HOME', '~', '*'], 'no expansion');
  t.same(splitArgv(`x"y"'z'`), ['xyz']);
  t.same(splitArgv(`echo '|'`), ['echo', '|'], 'a quoted operator is literal');
  t.throws(() => splitArgv('echo hi | wc'), /without a shell/);
  t.throws(() => splitArgv('echo hi > out'), /without a shell/);
  t.throws(() => splitArgv(`echo "open`), /unterminated double quote/);
  t.throws(() => splitArgv(`echo 'open`), /unterminated single quote/);
});

t.test('placeholders are filled per argument, never re-split', async (t) => {
  const argv = splitArgv('log --reason {reason} --to={to_mode}').map((a) => fillPlaceholders(a, { reason: 'keyword "a b"; rm -rf /', to_mode: 'x' }));
  t.same(argv, ['log', '--reason', 'keyword "a b"; rm -rf /', '--to=x']);
});
