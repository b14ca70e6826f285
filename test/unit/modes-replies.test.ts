// Proves the mode machine answers by events: a keyword offer gets a reply saying whether it switched, context values reach the governor by system id, runs are announced.
import t from 'tap';
import { createActor, createMachine, fromCallback, type AnyActorRef } from 'xstate';
import { createModeMachine } from '../../actors/modes/machine.js';
import { cortexLoopLogic, type TickRequest } from '../../actors/cortex/loop.js';
import { SimulatedClock } from 'xstate';
import { config, start } from '../fixtures/modes/harness.js';

const kw = (from: string, to: string, keywords: string[]) => ({
  from_mode: from,
  to_mode: to,
  transition_type: 'input_triggered',
  trigger_keywords: keywords,
  priority: 1,
});

t.test(
  'a keyword offer with an id is answered: switched when a rule fired, not when none did, switched when the offering mode is not the running one',
  async (t) => {
    const m = start(config({ transition_rules: [kw('a', 'b', ['stop'])] }));
    await m.active('a');
    const answers: Array<{ id: string; switched: boolean }> = [];
    m.actor.on('keywords.answered', (e) => void answers.push({ id: e.id, switched: e.switched }));
    m.actor.send({ type: 'input.text', text: 'look at my stopwatch', mode: 'a', id: 'x1' });
    m.actor.send({ type: 'input.text', text: 'stop', mode: 'b', id: 'x2' });
    await m.flush();
    t.equal(m.current(), 'a', 'an offer from a mode that does not run applies no rule of the running mode');
    m.actor.send({ type: 'input.text', text: 'please stop', mode: 'a', id: 'x3' });
    await m.active('b');
    t.same(answers, [
      { id: 'x1', switched: false },
      { id: 'x2', switched: true },
      { id: 'x3', switched: true },
    ]);
    m.actor.send({ type: 'input.text', text: 'anything', mode: 'a', id: 'x4' });
    await m.flush();
    t.same(answers.at(-1), { id: 'x4', switched: true }, 'the mode that offered was left: its tick ends without the model');
    t.ok(
      m.of('mode.ready').some((e) => (e as { mode: string }).mode === 'b'),
      'the machine announces the run of b',
    );
    t.ok(
      m.of('mode.left').some((e) => (e as { mode: string }).mode === 'a'),
      'and that a stopped running',
    );
    m.actor.stop();
  },
);

t.test('context values reach the actor with system id `safety` as events, from the mode machine itself', async (t) => {
  const seen: unknown[] = [];
  const governor = fromCallback(({ receive }) => {
    receive((e) => void seen.push(e));
  });
  const modes = createModeMachine(config(), { memory: false });
  const root = createMachine({
    invoke: [
      { id: 'safety', systemId: 'safety', src: governor },
      { id: 'modes', systemId: 'modes', src: modes },
    ],
  });
  const actor = createActor(root, { clock: new SimulatedClock() }).start();
  const ref = actor.system.get('modes') as AnyActorRef;
  ref.send({ type: 'context.update', values: { gps_fix: true, latitude: 48.1 } });
  ref.send({ type: 'context.update', key: 'longitude', value: 11.5 });
  t.same(seen, [
    { type: 'safety.context', values: { gps_fix: true, latitude: 48.1 } },
    { type: 'safety.context', values: { gps_fix: true, latitude: 48.1, longitude: 11.5 } },
  ]);
  actor.stop();
});

t.test('the loop keeps the finals it is woken with and hands them to the next tick once', async (t) => {
  const clock = new SimulatedClock();
  const requests: TickRequest[] = [];
  let release: () => void = () => {};
  const loop = createActor(cortexLoopLogic(), {
    clock,
    input: {
      hertz: 1,
      clock,
      tick: (req) => {
        requests.push(req);
        return new Promise((resolve) => (release = () => resolve({ calledModel: false })));
      },
    },
  }).start();
  // Slot 0 runs at once; two finals arrive while it runs.
  loop.send({ type: 'loop.wake', text: 'hello' });
  loop.send({ type: 'loop.wake', text: 'go to sleep' });
  release();
  await new Promise((r) => setImmediate(r));
  t.equal(requests.length, 2, 'one more tick at once after the running one');
  t.same(requests[0]!.finals, undefined, 'the first tick had none');
  t.same(requests[1]!.finals, ['hello', 'go to sleep'], 'the woken tick gets both, oldest first');
  release();
  await new Promise((r) => setImmediate(r));
  clock.increment(1000);
  await new Promise((r) => setImmediate(r));
  t.equal(requests.length, 3);
  t.same(requests[2]!.finals, undefined, 'finals are handed out once');
  release();
  loop.stop();
});
