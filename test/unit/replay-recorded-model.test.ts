// The recorded model pairs each replayed call with the recorded answer of the tick that took the same typed lines, counts what it could not pair, and never shifts an answer onto the next tick.
import t from 'tap';
import { ReplayClock } from '../../actors/replay/replay-clock.js';
import { RecordedModel, type RecordedOutcome } from '../../actors/replay/replay-registry.js';
import { TickFinals } from '../../actors/replay/tick-finals.js';

const settle = async () => {
  await new Promise<void>((resolve) => setImmediate(resolve));
};

t.test('a prompt takes the finals its mode received since its previous prompt', async (t) => {
  const took = new TickFinals();
  const keys = [
    { type: 'prompt', mode: 'listen' },
    { type: 'input', mode: 'listen', final: true, text: 'call set_led' },
    { type: 'input', mode: 'listen', final: false, text: 'another node says: hello 3' },
    { type: 'input', mode: 'other', final: true, text: 'not this mode' },
    { type: 'input', mode: 'listen', final: true, text: 'and blue' },
    { type: 'prompt', mode: 'listen' },
    { type: 'prompt', mode: 'listen' },
    { type: 'input', mode: 'listen', final: true, text: 'switch to sleep' },
    { type: 'mode.changed', from: 'listen', to: 'sleep' },
    { type: 'prompt', mode: 'listen' },
  ].map((e) => took.see(e));
  t.same(keys, ['', undefined, undefined, undefined, undefined, 'call set_led\nand blue', '', undefined, undefined, '']);
});

const answer = (name: string, askedAtMs: number, finals: string): RecordedOutcome => ({
  answer: { toolCalls: name ? [{ name, arguments: {} }] : [], model: 'recorded' },
  streamed: false,
  latencyMs: 20,
  askedAtMs,
  finals,
});

/** Asks `model` at `at` (simulated ms) for a tick that took `finals`; the names of the tools it answered. */
async function askAt(clock: ReplayClock, model: RecordedModel, at: number, finals: string | undefined): Promise<string[]> {
  await clock.advanceTo(at, 100, settle);
  const plugin = model.plugin(
    () => 'listen',
    () => finals,
  );
  const asked = plugin.ask({ messages: [], tools: [] }, new AbortController().signal);
  await clock.advanceTo(at + 50, 100, settle);
  return (await asked).toolCalls.map((c) => c.name);
}

t.test("a typed line's answer reaches the tick that took the line, though the run made one call more before it", async (t) => {
  const clock = new ReplayClock();
  // The run: a first tick, a tick woken by a device's status during it, then three typed lines.
  const outcomes = new Map([
    [
      'listen',
      [answer('', 46, 'body up'), answer('', 260, ''), answer('set_led', 292, 'red'), answer('set_led', 328, 'seven'), answer('show_text', 355, 'hi')],
    ],
  ]);
  const model = new RecordedModel(outcomes, clock, () => 1000);
  // The replay's first tick is the status's own: it has no twin of the run's second.
  t.same(await askAt(clock, model, 25, 'body up'), []);
  t.same(await askAt(clock, model, 288, 'red'), ['set_led']);
  t.same(await askAt(clock, model, 340, 'seven'), ['set_led']);
  t.same(await askAt(clock, model, 400, 'hi'), ['show_text']);
  t.equal(model.missed, 0, 'the idle answer is still in the window');
  t.same(await askAt(clock, model, 1500, ''), [], 'no answer near: empty');
  t.equal(model.missed, 1, 'the idle answer no call took is counted once the window passed it');
  t.equal(model.extra, 1, 'the call with nothing near is counted');
});

t.test('calls whose finals match no recorded tick take the answers in order, within the window', async (t) => {
  const clock = new ReplayClock();
  const outcomes = new Map([['listen', [answer('a', 100, ''), answer('b', 600, ''), answer('c', 1100, '')]]]);
  const model = new RecordedModel(outcomes, clock, () => 300);
  t.same(await askAt(clock, model, 120, undefined), ['a']);
  t.same(await askAt(clock, model, 700, 'typed in the replay only'), ['b']);
  t.same(await askAt(clock, model, 1500, ''), [], 'c was asked 400 ms before: outside the window, counted as missed');
  t.equal(model.missed, 1);
  t.equal(model.extra, 1);
});
