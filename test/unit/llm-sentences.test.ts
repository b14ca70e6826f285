// Proves the sentence splitter of streamed speech: sentences come out complete, once, in order, whatever the fragment boundaries.
import t from 'tap';
import { SentenceSplitter, splitSentences } from '../../src/cortex/llm/sentences.js';

const TEXT = 'Hello there! I am Pip. It costs 5. 3 apples are enough, said Dr. Smith? Yes… Done';

t.test('fed every prefix of the text, the sentences equal those of the whole text, each once', async (t) => {
  const whole = splitSentences(TEXT);
  t.same(whole, ['Hello there!', 'I am Pip.', 'It costs 5. 3 apples are enough, said Dr.', 'Smith?', 'Yes… Done'], 'Unicode sentence boundaries (UAX #29)');
  for (const step of [1, 2, 3, 7]) {
    const s = new SentenceSplitter();
    const got: string[] = [];
    for (let i = step; i < TEXT.length; i += step) got.push(...s.update(TEXT.slice(0, i)));
    got.push(...s.update(TEXT, true));
    t.same(got, whole, `fragments of ${step} characters`);
  }
});

t.test('a sentence comes out as soon as the next one starts with a letter, not before', async (t) => {
  const s = new SentenceSplitter();
  t.same(s.update('Hello there.'), [], 'the end of the text may still continue');
  t.same(s.update('Hello there. '), []);
  t.same(s.update('Hello there. I'), ['Hello there.']);
  t.same(s.update('Hello there. It costs 5. 3'), [], 'a number after a full stop does not settle the boundary');
  t.same(s.update('Hello there. It costs 5. 3 apples'), [], 'and here the rules say it was no boundary');
  t.same(s.update('Hello there. It costs 5. 3 apples. Bye', true), ['It costs 5. 3 apples.', 'Bye']);
  t.throws(() => s.update('Something else'), /only grow/);
});
