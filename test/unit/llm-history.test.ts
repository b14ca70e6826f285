// Proves the conversation history: a window of N exchanges, one background summary at a time, truncation on failure, abort on stop.
import t from 'tap';
import { answerText, ConversationHistory, withHistory } from '../../src/cortex/history.js';
import { withTimeout } from '../../src/cortex/llm/chat-plugin.js';

t.test('keeps the last N exchanges; older ones stay verbatim until N of them are summarised in one request', async (t) => {
  const asked: string[] = [];
  const h = new ConversationHistory({ length: 2, summarise: async (text) => (asked.push(text), `S${asked.length}`) });
  h.record('p1', 'a1');
  h.record('p2', 'a2');
  h.record('p3', 'a3');
  await h.idle();
  t.equal(asked.length, 0, 'one exchange waiting is not a batch yet');
  t.same(
    h.messages().map((m) => m.content),
    ['p1', 'a1', 'p2', 'a2', 'p3', 'a3'],
    'and it is still sent verbatim',
  );
  h.record('p4', 'a4');
  await h.idle();
  t.same(asked, ['Prompt: p1\nRobot: a1\n\nPrompt: p2\nRobot: a2'], 'two waiting: one summary of both');
  t.same(
    h.messages().map((m) => m.content),
    ['Summary of the earlier conversation: S1', 'p3', 'a3', 'p4', 'a4'],
  );
  h.record('p5', 'a5');
  h.record('p6', 'a6');
  await h.idle();
  t.same(asked[1], 'Earlier summary: S1\n\nPrompt: p3\nRobot: a3\n\nPrompt: p4\nRobot: a4', 'the previous summary is folded in');
});

t.test('summaries over 50 answers: at most one per history_length answers (calls per answer <= 1 + 1/N)', async (t) => {
  for (const n of [1, 3, 5, 10]) {
    let calls = 0;
    const h = new ConversationHistory({ length: n, summarise: async () => (calls++, 'sum') });
    for (let i = 0; i < 50; i++) {
      h.record(`p${i}`, `a${i}`);
      await h.idle();
    }
    t.ok(calls <= 50 / n, `history_length ${n}: ${calls} summaries for 50 answers`);
    t.ok((50 + calls) / 50 <= 1 + 1 / n, `model calls per answer ${(50 + calls) / 50} <= ${1 + 1 / n}`);
    t.ok(h.messages().length <= 1 + 2 * (2 * n - 1), 'the prompt carries at most 2N-1 exchanges and the summary');
  }
});

t.test('messages() never waits for a summary; the batch in flight is still sent verbatim', async (t) => {
  let release!: (s: string) => void;
  const asked: string[] = [];
  const h = new ConversationHistory({
    length: 1,
    summarise: (text) => {
      asked.push(text);
      return new Promise((r) => (release = r));
    },
  });
  h.record('p1', 'a1');
  h.record('p2', 'a2'); // p1 -> summary in flight
  h.record('p3', 'a3'); // p2 waits
  h.record('p4', 'a4'); // p3 waits
  t.same(
    h.messages().map((m) => m.content),
    ['p1', 'a1', 'p2', 'a2', 'p3', 'a3', 'p4', 'a4'],
    'a tick sees everything at once',
  );
  t.equal(asked.length, 1, 'one summary at a time');
  release('one');
  await new Promise((r) => setImmediate(r));
  t.equal(asked.length, 2);
  t.match(asked[1], /Earlier summary: one[\s\S]*p2/);
  release('two');
  await new Promise((r) => setImmediate(r));
  release('three');
  await h.idle();
  t.equal(h.summary, 'three');
  t.same(
    h.messages().map((m) => m.content),
    ['Summary of the earlier conversation: three', 'p4', 'a4'],
  );
});

t.test('a failing or missing summariser truncates; stop() aborts the summary in flight', async (t) => {
  const failing = new ConversationHistory({ length: 1, summarise: async () => Promise.reject(new Error('model down')) });
  failing.record('a', '1');
  failing.record('b', '2');
  await failing.idle();
  t.equal(failing.dropped, 1);
  t.equal(failing.summary, '');
  const none = new ConversationHistory({ length: 1 });
  none.record('a', '1');
  none.record('b', '2');
  t.equal(none.dropped, 1);
  let aborted = false;
  const slow = new ConversationHistory({
    length: 1,
    summarise: (_text, signal) => new Promise((_r, reject) => signal.addEventListener('abort', () => ((aborted = true), reject(signal.reason)))),
  });
  slow.record('a', '1');
  slow.record('b', '2');
  slow.stop();
  await slow.idle();
  t.ok(aborted);
  t.equal(new ConversationHistory({ length: 0 }).messages().length, 0);
});

t.test('history goes after the system messages; answers are remembered with their tool calls', async (t) => {
  const h = new ConversationHistory({ length: 3 });
  h.record('hi', answerText({ text: 'hello', toolCalls: [{ name: 'move', arguments: { action: 'sit' } }] }));
  const out = withHistory(
    [
      { role: 'system', content: 'sys' },
      { role: 'user', content: 'now' },
    ],
    h,
  );
  t.same(
    out.map((m) => m.content),
    ['sys', 'hi', 'hello [move {"action":"sit"}]', 'now'],
  );
  t.equal(answerText({ toolCalls: [] }), '(no answer)');
});

t.test('withTimeout tells its own timeout from the caller abort', async (t) => {
  await t.rejects(
    withTimeout('m', 10, new AbortController().signal, (s) => new Promise((_r, j) => s.addEventListener('abort', () => j(new Error('x'))))),
    {
      name: 'LlmTimeoutError',
    },
  );
  const ac = new AbortController();
  const p = withTimeout('m', 10_000, ac.signal, (s) => new Promise((_r, j) => s.addEventListener('abort', () => j(s.reason))));
  ac.abort(new Error('owner'));
  await t.rejects(p, { message: 'owner' });
});
