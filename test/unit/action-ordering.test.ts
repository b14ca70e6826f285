// Proves action_execution_mode on real action actors: sequential answers run one action after another, dependencies wait for their labels, concurrent changes nothing.
import t from 'tap';
import { pino } from 'pino';
import { z } from 'zod';
import { filter, firstValueFrom } from 'rxjs';
import { createActionHandle } from '../../actors/actions/action.js';
import { ActionSequence, AnswerOrder, type ExecutionMode } from '../../actors/actions/ordering.js';
import { runTick } from '../../actors/cortex/tick.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { ActionHandle } from '../../src/cortex/contracts.js';
import type { ActionConfig, AgentConfig, ModeConfig } from '../../src/config/schema.js';
import type { ConnectorFactory } from '../../src/cortex/action.js';
import { toolsForMode } from '../../src/cortex/tools.js';

type ActionEv = Extract<AgentEvent, { type: 'action' }>;

/** A connector whose commands wait until the test ends them: `finish(i)` resolves, `fail(i)` rejects. */
function gate() {
  const started: string[] = [];
  const ends: Array<{ resolve: () => void; reject: (e: Error) => void }> = [];
  const watchers: Array<() => void> = [];
  const create: ConnectorFactory = () => ({
    name: 'gate',
    run: (value, signal) =>
      new Promise<void>((resolve, reject) => {
        const v = value as { sentence?: string; emotion?: string };
        started.push(v.sentence ?? v.emotion ?? '?');
        ends.push({ resolve, reject });
        for (const w of watchers.splice(0)) w();
        signal.addEventListener('abort', () => reject(signal.reason));
      }),
    stop: async () => {},
  });
  /** Resolves once `n` commands have started on the connector. */
  const startedCount = async (n: number) => {
    while (started.length < n) await new Promise<void>((r) => watchers.push(r));
  };
  return { create, started, startedCount, finish: (i: number) => ends[i]!.resolve(), fail: (i: number) => ends[i]!.reject(new Error('servo jammed')) };
}

const entry = (name: string): ActionConfig => ({
  name,
  llm_label: name,
  connector: 'test_gate',
  implementation: 'passthrough',
  config: {},
  exclude_from_prompt: false,
});

async function setup(mode: ExecutionMode, dependencies: Record<string, string[]> = {}) {
  const g = gate();
  const gated = (action: string) => ({
    action,
    type: 'test_gate',
    description: 'test',
    schema: z.looseObject({}),
    needs: () => [],
    motion: false,
    create: g.create,
  });
  const registry = withPlugins(builtinPlugins, { connectors: [gated('speak'), gated('face')] });
  const plugins = await resolvePlugins(registry, { modes: { m: { agent_inputs: [], simulators: [], agent_actions: [entry('speak'), entry('face')] } } });
  const bus = new AgentBus();
  const events: ActionEv[] = [];
  bus.events$.subscribe((e) => e.type === 'action' && events.push(e));
  const deps = { logger: pino({ level: 'silent' }), bus, mode: 'm', stateDir: '/nonexistent', write: () => {}, plugins };
  const handles = [createActionHandle(entry('speak'), deps), createActionHandle(entry('face'), deps)];
  const lifetime = new AbortController();
  const sequence = new ActionSequence();
  const order = () => new AnswerOrder({ mode, dependencies, sequence, lifetime: lifetime.signal, bus, modeName: 'm' });
  const { startedCount } = g;
  const state = (s: ActionEv['state']) => firstValueFrom(bus.events$.pipe(filter((e): e is ActionEv => e.type === 'action' && e.state === s)));
  t.teardown(async () => {
    lifetime.abort();
    for (const h of handles) await h.stop();
  });
  return { g, bus, events, handles, order, lifetime, startedCount, state };
}

const byLabel = (hs: readonly ActionHandle[], label: string) => hs.find((h) => h.entry.llm_label === label)!;
/** Lets every pending promise and actor event settle. */
const settle = () => new Promise((r) => setImmediate(r));

t.test('concurrent hands out the handles themselves: both actions start at once', async (t) => {
  const s = await setup('concurrent');
  const hs = s.order().wrap(s.handles);
  t.equal(hs[0], s.handles[0], 'no wrapper');
  byLabel(hs, 'speak').dispatch({ sentence: 'hello' }, 'model');
  byLabel(hs, 'face').dispatch({ emotion: 'joy' }, 'model');
  await s.startedCount(2);
  t.same(s.g.started, ['hello', 'joy']);
});

t.test('sequential: an action starts when the one before it ended, a failure does not stop the next, and the next answer queues after', async (t) => {
  const s = await setup('sequential');
  const first = s.order();
  const hs = first.wrap(s.handles);
  byLabel(hs, 'face').dispatch({ emotion: 'joy' }, 'model');
  const spoken = byLabel(hs, 'speak').run({ sentence: 'hello' }, s.lifetime.signal, { origin: 'model' });
  first.close();
  await s.startedCount(1);
  await settle();
  t.same(s.g.started, ['joy'], 'speak waits for face');
  s.g.fail(0);
  await s.startedCount(2);
  t.same(s.g.started, ['joy', 'hello'], 'the failed face is reported by its action; speak still runs');
  t.ok(
    s.events.some((e) => e.label === 'face' && e.state === 'failed'),
    'the failure is on the bus',
  );
  // A second answer while the first still speaks: its command waits for the first answer's end.
  const second = s.order().wrap(s.handles);
  byLabel(second, 'face').dispatch({ emotion: 'sad' }, 'model');
  await settle();
  t.same(s.g.started, ['joy', 'hello']);
  s.g.finish(1);
  await spoken;
  await s.startedCount(3);
  t.same(s.g.started, ['joy', 'hello', 'sad']);
  s.g.finish(2);
});

t.test('dependencies: a command waits for its label handed out later in the answer; one never handed out is not waited for', async (t) => {
  const s = await setup('dependencies', { speak: ['face'] });
  const order = s.order();
  const hs = order.wrap(s.handles);
  byLabel(hs, 'speak').dispatch({ sentence: 'look at my face' }, 'model');
  byLabel(hs, 'face').dispatch({ emotion: 'smile' }, 'model');
  order.close();
  await s.startedCount(1);
  await settle();
  t.same(s.g.started, ['smile'], 'speak waits for face although it came first');
  s.g.finish(0);
  await s.startedCount(2);
  t.same(s.g.started, ['smile', 'look at my face']);
  s.g.finish(1);

  const alone = s.order();
  byLabel(alone.wrap(s.handles), 'speak').dispatch({ sentence: 'no face today' }, 'model');
  await settle();
  t.equal(s.g.started.length, 2, 'until the answer is complete, face may still come');
  alone.close();
  await s.startedCount(3);
  t.same(s.g.started.at(-1), 'no face today');
});

t.test('dependencies: a command whose dependency failed is dropped, with the reason on the bus', async (t) => {
  const s = await setup('dependencies', { speak: ['face'] });
  const order = s.order();
  const hs = order.wrap(s.handles);
  byLabel(hs, 'face').dispatch({ emotion: 'think' }, 'model');
  const spoken = byLabel(hs, 'speak').run({ sentence: 'done thinking' }, s.lifetime.signal, { origin: 'model' });
  order.close();
  await s.startedCount(1);
  const dropped = s.state('dropped');
  s.g.fail(0);
  const e = await dropped;
  t.equal(e.label, 'speak');
  t.match(e.error, /not run: its dependency "face" did not finish/);
  t.equal(
    await spoken.then(
      () => 'done',
      (e: { state?: string }) => e.state,
    ),
    'dropped',
  );
  t.same(s.g.started, ['think'], 'speak never reached its connector');
});

t.test('a command waiting for its turn is dropped when the mode stops', async (t) => {
  const s = await setup('sequential');
  const hs = s.order().wrap(s.handles);
  byLabel(hs, 'face').dispatch({ emotion: 'curious' }, 'model');
  byLabel(hs, 'speak').dispatch({ sentence: 'never said' }, 'model');
  await s.startedCount(1);
  const dropped = firstValueFrom(s.bus.events$.pipe(filter((e): e is ActionEv => e.type === 'action' && e.state === 'dropped' && e.label === 'speak')));
  s.lifetime.abort();
  t.match((await dropped).error, /its mode stopped before its turn/);
  t.same(s.g.started, ['curious']);
});

t.test("a tick of a sequential mode: the model's face call runs before its speech, which waits for it", async (t) => {
  const s = await setup('sequential');
  const mode = { system_prompt_base: 'be nice', agent_actions: [entry('speak'), entry('face')], action_execution_mode: 'sequential' } as unknown as ModeConfig;
  const config = { system_governance: 'laws', system_prompt_examples: '', system_prompt_base: '' } as unknown as AgentConfig;
  const answer = {
    toolCalls: [
      { name: 'face', arguments: { emotion: 'joy' } },
      { name: 'speak', arguments: { sentence: 'I am glad.' } },
    ],
    model: 'fake',
    latencyMs: 1,
  };
  await runTick(
    {
      config,
      modeName: 'm',
      mode,
      inputs: [],
      handles: () => s.handles,
      llm: { type: 'fake', ask: async () => answer },
      toolsForMode,
      bus: s.bus,
      logger: pino({ level: 'silent' }),
      keywords: () => false,
      skipIdle: false,
      maxToolRounds: 1,
      lifetime: s.lifetime.signal,
      sequence: new ActionSequence(),
    },
    { seq: 1, slot: 1, dueAt: 0, startedAt: 0, latenessMs: 0, skipped: 0, wake: false },
    new AbortController().signal,
  );
  await s.startedCount(1);
  await settle();
  t.same(s.g.started, ['joy'], 'the sentence waits for the face');
  s.g.finish(0);
  await s.startedCount(2);
  t.same(s.g.started, ['joy', 'I am glad.']);
  s.g.finish(1);
});
