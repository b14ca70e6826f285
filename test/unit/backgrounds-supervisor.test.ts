// Proves the backgrounds supervisor: each background is its own actor, its context reaches the mode, a failure restarts it with the backoff, health is on the bus.
import t from 'tap';
import { pino } from 'pino';
import { Subject, filter, firstValueFrom, type Observable } from 'rxjs';
import { assign, createActor, setup } from 'xstate';
import { backgroundIds, backgroundsLogic, type BackgroundActorInput } from '../../actors/backgrounds/supervisor.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { InputContext, InputPlugin } from '../../src/cortex/input.js';
import { checkPlugins } from '../../src/config/plugins-check.js';
import type { AgentConfig } from '../../src/config/schema.js';

type BgEvent = Extract<AgentEvent, { type: 'background' }>;

/** A plugin whose source the test drives: `sources[n]` is the n-th plugin made. */
function producer() {
  const sources: Array<Subject<number>> = [];
  const publishers: Array<NonNullable<InputContext['publishContext']>> = [];
  let stopped = 0;
  const create = (callbacks: Pick<InputContext, 'publishContext'>): InputPlugin => {
    const source = new Subject<number>();
    sources.push(source);
    publishers.push(callbacks.publishContext!);
    return {
      type: 'GpsInput',
      descriptor: 'GPS',
      listen: () => source as Observable<unknown>,
      poll: async () => undefined,
      rawToText: (raw) => {
        callbacks.publishContext?.({ gps_fix: (raw as number) > 0 });
        return undefined;
      },
      formattedLatestBuffer: () => undefined,
      stop: async () => void stopped++,
    };
  };
  return { create, sources, publishers, stopped: () => stopped };
}

function start(backgrounds: Array<Omit<BackgroundActorInput, 'bus' | 'logger' | 'mode'>>) {
  const bus = new AgentBus();
  const health: BgEvent[] = [];
  bus.events$.subscribe((e) => e.type === 'background' && health.push(e));
  const logic = backgroundsLogic(backgrounds.map((b) => ({ ...b, bus, logger: pino({ level: 'silent' }), mode: 'patrol' })));
  // The mode's part: invoke the supervisor, keep what it relays.
  const mode = setup({
    types: { context: {} as { values: Array<Record<string, unknown>> }, events: {} as { type: 'context.update'; values: Record<string, unknown> } },
    actors: { backgrounds: logic },
  }).createMachine({
    context: { values: [] },
    invoke: { id: 'backgrounds', src: 'backgrounds' },
    on: { 'context.update': { actions: assign({ values: ({ context, event }) => [...context.values, event.values] }) } },
  });
  const actor = createActor(mode).start();
  const next = (state: BgEvent['state']) => firstValueFrom(bus.events$.pipe(filter((e): e is BgEvent => e.type === 'background' && e.state === state)));
  return { bus, health, actor, next };
}

t.test('a background runs as its own actor: its context values reach the mode and the bus, never as a prompt input', async (t) => {
  const p = producer();
  const s = start([{ id: 'background:GpsInput', type: 'GpsInput', create: p.create }]);
  const seen: AgentEvent[] = [];
  s.bus.events$.subscribe((e) => seen.push(e));
  t.same(
    s.health.map((h) => [h.background, h.state, h.mode]),
    [['GpsInput', 'running', 'patrol']],
  );
  t.ok(s.actor.getSnapshot().children.backgrounds?.getSnapshot().children['background:GpsInput'], 'the child is named background:<type> under the supervisor');
  p.sources[0]!.next(1);
  t.same(s.actor.getSnapshot().context.values, [{ gps_fix: true }]);
  t.match(seen, [{ type: 'context', source: 'background.GpsInput', values: { gps_fix: true } }]);
  t.notOk(
    seen.some((e) => e.type === 'input'),
    'no input event',
  );
  s.actor.stop();
  t.equal(p.stopped(), 1, 'the plugin stops with the mode');
  t.same(s.health.at(-1)?.state, 'stopped', 'and says so on the bus');
});

t.test('a failing background restarts with the backoff (a new plugin) and its sibling goes on; one that cannot be made fails for good', async (t) => {
  const a = producer();
  const b = producer();
  const restart = { initialMs: 5, maxMs: 20, healthyMs: 60_000 };
  const s = start([
    { id: 'background:GpsInput', type: 'GpsInput', create: a.create, restart },
    { id: 'background:BodyInput', type: 'BodyInput', create: b.create, restart },
    {
      id: 'background:PresenceInput',
      type: 'PresenceInput',
      create: () => {
        throw new Error('no camera 0');
      },
    },
  ]);
  t.same(
    s.health.filter((h) => h.background === 'PresenceInput').map((h) => [h.state, h.error]),
    [
      ['running', undefined],
      ['failed', 'not started: no camera 0'],
    ],
    'a plugin that cannot be made fails for good (no restart)',
  );
  const restarting = s.next('restarting');
  a.sources[0]!.error(new Error('port unplugged'));
  const r = await restarting;
  t.match(r, { background: 'GpsInput', error: 'port unplugged' });
  t.ok(r.retry_in_ms! >= 0 && r.retry_in_ms! <= restart.maxMs, 'the delay comes from the backoff within its cap');
  t.equal(a.stopped(), 1, 'the failed plugin was stopped');
  await s.next('running');
  t.equal(a.sources.length, 2, 'a fresh plugin runs after the backoff');
  a.sources[1]!.next(0);
  b.sources[0]!.next(1);
  t.same(s.actor.getSnapshot().context.values, [{ gps_fix: false }, { gps_fix: true }], 'both background publish again');
  s.actor.stop();
});

t.test('ids name each background, with #n when a type repeats', async (t) => {
  t.same(backgroundIds(['GpsInput', 'BodyInput', 'GpsInput']), ['background:GpsInput#1', 'background:BodyInput', 'background:GpsInput#2']);
});

t.test('check: a background must be an input that publishes context, with a valid config', async (t) => {
  const config = {
    global_lifecycle_hooks: [],
    transition_rules: [],
    modes: {
      m: {
        lifecycle_hooks: [],
        mcp_servers: [],
        agent_inputs: [],
        agent_actions: [],
        simulators: [],
        backgrounds: [
          { type: 'TextInput', config: {} },
          { type: 'GpsInput', config: { serial_port: '/dev/ttyACM0', baud: 9600 } },
          { type: 'NoSuchInput', config: {} },
          { type: 'BodyInput', config: { robot: 'unitree_go2', facets: ['localization'] } },
        ],
      },
    },
  } as unknown as AgentConfig;
  const r = checkPlugins(config);
  const lines = r.problems.map((p) => `${p.path.join('.')}: ${p.message}`);
  t.match(
    lines[0],
    /^modes\.m\.backgrounds\.0\.type: "TextInput" publishes no context values, so it cannot run as a background; backgrounds: GpsInput, BodyInput/,
  );
  t.match(lines[1], /^modes\.m\.backgrounds\.2\.type: .*NoSuchInput/);
  t.equal(lines.length, 2, 'a valid BodyInput background passes');
  t.same(
    r.unknownFields.map((u) => u.path),
    ['modes.m.backgrounds[1].config.baud'],
    'unknown options are reported as in inputs',
  );
});
