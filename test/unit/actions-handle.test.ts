// Proves the action actor's queue policies: speak queues and can be interrupted, move/face keep the latest, bad values fail on the bus.
import t from 'tap';
import { pino } from 'pino';
import { z } from 'zod';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { ACTION_QUEUE_LIMIT, createActionHandle } from '../../actors/actions/action.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { ActionConfig } from '../../src/config/schema.js';
import type { ConnectorFactory } from '../../src/cortex/action.js';

type ActionEv = Extract<AgentEvent, { type: 'action' }>;

/** A connector whose commands wait until the test releases them (or their signal aborts). */
function gate() {
  const started: unknown[] = [];
  const aborted: unknown[] = [];
  const waiting: Array<() => void> = [];
  let stopped = 0;
  const create: ConnectorFactory = () => ({
    name: 'gate',
    run: (value, signal) =>
      new Promise<void>((resolve, reject) => {
        started.push(value);
        if ((value as { sentence?: string }).sentence === 'boom') return reject(new Error('speaker on fire'));
        waiting.push(resolve);
        signal.addEventListener('abort', () => {
          waiting.splice(waiting.indexOf(resolve), 1);
          aborted.push(value);
          reject(signal.reason);
        });
      }),
    stop: async () => void stopped++,
  });
  return { create, started, aborted, release: () => waiting.shift()?.(), stopped: () => stopped };
}

const g = gate();
// A registry of its own: the built-in plugins plus the gate as a connector of speak and move.
const gated = (action: string) => ({
  action,
  type: 'test_gate',
  description: 'test',
  schema: z.looseObject({}),
  needs: () => [],
  motion: false,
  create: g.create,
});
const registry = withPlugins(builtinPlugins, { connectors: [gated('speak'), gated('move')] });

const entry = (name: string, connector = 'test_gate'): ActionConfig => ({
  name,
  llm_label: name,
  connector,
  implementation: 'passthrough',
  config: {},
  exclude_from_prompt: false,
});

const plugins = await resolvePlugins(registry, {
  modes: { m: { agent_inputs: [], simulators: [], agent_actions: [entry('speak'), entry('move'), entry('speak', 'console')] } },
});

function setup(name: string, connector?: string) {
  const bus = new AgentBus();
  const events: ActionEv[] = [];
  bus.events$.subscribe((e) => e.type === 'action' && events.push(e));
  const lines: string[] = [];
  const handle = createActionHandle(entry(name, connector), {
    logger: pino({ level: 'silent' }),
    bus,
    mode: 'm',
    stateDir: '/nonexistent',
    write: (l) => lines.push(l),
    plugins,
  });
  const next = (state: ActionEv['state']) => firstValueFrom(bus.events$.pipe(filter((e): e is ActionEv => e.type === 'action' && e.state === state)));
  return { bus, events, handle, lines, next };
}

/** The ActionError state a promise rejects with, or 'resolved'. */
const stateOf = (p: Promise<void>) =>
  p.then(
    () => 'resolved',
    (e: { state?: string }) => e.state,
  );

const states = (events: ActionEv[]) => events.map((e) => `${e.state}:${JSON.stringify(e.value)}`);

t.test('speak runs utterances in order, one at a time, and dispatch returns at once', async (t) => {
  const { handle, events, next } = setup('speak');
  handle.dispatch({ sentence: 'one' }, 'model');
  handle.dispatch({ sentence: 'two' }, 'model');
  t.equal(handle.queueLength, 1, 'second utterance waits');
  t.same(g.started.slice(-1), [{ sentence: 'one' }]);
  const done = next('done');
  const running = next('running');
  g.release();
  await done;
  await running;
  t.same(g.started.slice(-1), [{ sentence: 'two' }]);
  const done2 = next('done');
  g.release();
  await done2;
  t.same(states(events), [
    'queued:{"sentence":"one"}',
    'running:{"sentence":"one"}',
    'queued:{"sentence":"two"}',
    'done:{"sentence":"one"}',
    'running:{"sentence":"two"}',
    'done:{"sentence":"two"}',
  ]);
  await handle.stop();
});

t.test('interrupt aborts the utterance playing and drops the queue', async (t) => {
  const { handle, events } = setup('speak');
  const before = g.aborted.length;
  handle.dispatch({ sentence: 'long story' }, 'model');
  handle.dispatch({ sentence: 'more' }, 'model');
  handle.dispatch({ sentence: 'even more' }, 'model');
  handle.interrupt();
  t.same(g.aborted.slice(before), [{ sentence: 'long story' }], 'connector signal aborted');
  t.equal(handle.queueLength, 0);
  t.same(
    events.filter((e) => e.state === 'interrupted' || e.state === 'dropped').map((e) => `${e.state}:${(e.value as { sentence: string }).sentence}`),
    ['interrupted:long story', 'dropped:more', 'dropped:even more'],
  );
  await handle.stop();
  t.ok(g.stopped() >= 1, 'connector released');
});

t.test('a flood of speech keeps at most ACTION_QUEUE_LIMIT waiting: the oldest are dropped and counted on the bus', async (t) => {
  const { handle, events } = setup('speak');
  const flood = ACTION_QUEUE_LIMIT * 5;
  for (let i = 0; i < flood; i++) handle.dispatch({ sentence: `answer ${i}` }, 'model');
  t.equal(handle.queueLength, ACTION_QUEUE_LIMIT, 'the queue stays at its bound');
  const dropped = events.filter((e) => e.state === 'dropped');
  // The first runs at once; of the rest, all but the newest ACTION_QUEUE_LIMIT made room.
  t.equal(dropped.length, flood - 1 - ACTION_QUEUE_LIMIT, 'every overflow is reported');
  t.match(dropped[0]?.error ?? '', /queue full/);
  t.same(dropped[0]?.value, { sentence: 'answer 1' }, 'the oldest waiting one goes first');
  t.equal(events.at(-1)?.overflowed, flood - 1 - ACTION_QUEUE_LIMIT, 'the running count rides on the events');
  t.ok(events.every((e) => (e.queue ?? 0) <= ACTION_QUEUE_LIMIT));
  await handle.stop();
});

t.test('move keeps only the newest pending command', async (t) => {
  const { handle, events, next } = setup('move');
  handle.dispatch({ action: 'sit' }, 'model');
  handle.dispatch({ action: 'dance' }, 'model');
  handle.dispatch({ action: 'turn left' }, 'model');
  t.equal(handle.queueLength, 1);
  const running = next('running');
  g.release();
  t.same((await running).value, { action: 'turn left' });
  t.same(
    events.filter((e) => e.state === 'dropped').map((e) => e.value),
    [{ action: 'dance' }],
  );
  const done = next('done');
  g.release();
  await done;
  await handle.stop();
});

t.test('an invalid value is reported as failed with the reason, never thrown', async (t) => {
  const { handle, events } = setup('move');
  t.doesNotThrow(() => handle.dispatch({ action: 'fly' }, 'model'));
  t.doesNotThrow(() => handle.dispatch('not an object at all', 'model'));
  t.equal(events.length, 2);
  t.equal(events[0]!.state, 'failed');
  t.match(events[0]!.error, /invalid value for move: action: Invalid option/);
  t.equal(handle.queueLength, 0);
  await handle.stop();
});

t.test('a connector failure is a failed event and the next command still runs', async (t) => {
  const { handle, next } = setup('speak');
  const failed = next('failed');
  handle.dispatch({ sentence: 'boom' }, 'model');
  t.match((await failed).error, /speaker on fire/);
  const running = next('running');
  handle.dispatch({ sentence: 'fine' }, 'model');
  t.same((await running).value, { sentence: 'fine' });
  await handle.stop();
});

t.test('run() resolves when done, accepts a bare string, and rejects when its signal aborts', async (t) => {
  const { handle } = setup('speak');
  const p = handle.run('hello', new AbortController().signal);
  g.release();
  await t.resolves(p);
  const ac = new AbortController();
  const q = handle.run({ sentence: 'waiting' }, ac.signal);
  ac.abort();
  t.equal(await stateOf(q), 'interrupted');
  t.equal(await stateOf(handle.run({ sentence: '' }, new AbortController().signal)), 'failed');
  await handle.stop();
});

t.test('busy$ is true while a command runs', async (t) => {
  const { handle, next } = setup('speak');
  const seen = firstValueFrom(handle.busy$.pipe(take(3), toArray()));
  handle.dispatch({ sentence: 'x' }, 'model');
  const done = next('done');
  g.release();
  await done;
  t.same(await seen, [false, true, false]);
  await handle.stop();
});

t.test('the console connector writes the sentence', async (t) => {
  const { handle, lines, next } = setup('speak', 'console');
  const done = next('done');
  handle.dispatch({ sentence: 'hello there' }, 'model');
  await done;
  t.same(lines, ['[speak] hello there']);
  await handle.stop();
});

t.test('stop settles pending run() calls and later dispatches are dropped', async (t) => {
  const { handle, events } = setup('speak');
  const p = handle.run({ sentence: 'a' }, new AbortController().signal);
  await handle.stop();
  t.equal(await stateOf(p), 'interrupted');
  handle.dispatch({ sentence: 'late' }, 'model');
  t.equal(events.at(-1)!.state, 'dropped');
});
