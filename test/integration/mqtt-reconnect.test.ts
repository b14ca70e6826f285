// mosquitto killed and started again under MqttInput and the fleet actor: their session actors back off (growing delays), reconnect, subscribe once per connection, deliver each message once, and the inspector sees their states.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { pino } from 'pino';
import { createActor, setup, type AnyActorRef, type InspectionEvent } from 'xstate';
import { createMqttInput } from '../../actors/inputs/mqtt-input.js';
import { fleetLogic } from '../../actors/fleet/fleet.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { FleetControl } from '../../src/fleet/execute.js';
import { haveMosquitto, type Broker } from '../support/mosquitto.js';
import { hostInput } from '../helpers/input-host.js';
import { USERS, Watcher, fleetBroker } from '../helpers/fleet.js';
import { actionLogic, handleOf } from '../../actors/actions/action.js';
import { startGovernor } from '../helpers/governor.js';
import { actionEntry, allActionPlugins } from '../helpers/plugins.js';
import { until } from '../helpers/wait.js';

t.setTimeout(300_000);
if (!haveMosquitto()) throw new Error('mosquitto, mosquitto_passwd and openssl are missing (bash scripts/setup.sh --tests installs them)');
const logger = pino({ level: 'silent' });
type StreamEv = Extract<AgentEvent, { type: 'stream' }>;
type FleetEv = Extract<AgentEvent, { type: 'fleet' }>;

/** The state values the inspector saw for the actor registered as `systemId`, in order, without repeats. */
function inspected(systemId: string) {
  const seen: string[] = [];
  const inspect = (e: InspectionEvent) => {
    if (e.type !== '@xstate.snapshot') return;
    const ref = e.actorRef as AnyActorRef;
    if (ref.system.get(systemId) !== ref) return;
    const value = (e.snapshot as { value?: unknown }).value;
    const state = typeof value === 'string' ? value : value && typeof value === 'object' ? Object.keys(value)[0] : undefined;
    if (state && seen.at(-1) !== state) seen.push(state);
  };
  return { seen, inspect };
}

let broker: Broker;
t.before(async () => {
  broker = await fleetBroker();
});
t.teardown(() => broker?.stop());

const publisher = () =>
  mqtt.connectAsync(broker.url, { protocolVersion: 5, username: 'r1', password: USERS.r1, reconnectPeriod: 0, clientId: `pub-${process.pid}` });

t.test('MqttInput: the broker killed and restarted; its session actor backs off, reconnects, subscribes once and delivers each message once', async (t) => {
  const view = inspected('mode:test/input:MqttInput/stream');
  const host = hostInput(
    'MqttInput',
    (callbacks) =>
      createMqttInput(
        { url: broker.url, username: 'r1', password: USERS.r1, topics: ['devices/r1/sensors/+'], template: '{payload}', final: true },
        { logger, stateDir: tmpdir(), signal: new AbortController().signal, ...callbacks },
      ),
    undefined,
    { inspect: view.inspect },
  );
  t.teardown(() => host.stop());
  const streams = () => host.events.filter((e): e is StreamEv => e.type === 'stream' && e.kind === 'mqtt');
  const subscribes = (from: number) =>
    broker
      .log()
      .slice(from)
      .match(/Received SUBSCRIBE from cortexd-in-[0-9a-f]+/g)?.length ?? 0;

  let mark = broker.log().length;
  await until('first connection', () => streams().some((e) => e.state === 'streaming'));
  await broker.waitLog(/Received SUBSCRIBE from cortexd-in-/, 15_000, mark);
  const plugin = host.slot()?.plugin;
  const pub = await publisher();
  await pub.publishAsync('devices/r1/sensors/a', 'one', { qos: 1 });
  await until('the first message', () => host.messages.some((m) => m.text === 'one'));
  await pub.endAsync();

  const before = host.events.length;
  await broker.kill();
  // The healthy connection is replaced at once (at most minCycleMs after it opened); the failed attempts then wait the backoff, growing.
  const backoffs = () =>
    host.events.slice(before).filter((e): e is StreamEv => e.type === 'stream' && e.kind === 'mqtt' && e.state === 'backingOff' && (e.attempt ?? 0) >= 2);
  await until('two backoffs while the broker is down', () => backoffs().length >= 2);
  const [b1, b2] = backoffs();
  t.ok(b1 && b2, 'backed off twice');
  t.match(b1, { input: 'MqttInput', attempt: 2, delay_ms: Number, reason: /refused the TCP connection \(is the broker running\?\)/ });
  t.match(b2, { attempt: 3 });
  t.ok(b2!.delay_ms! >= b1!.delay_ms!, `the wait grows (${b1!.delay_ms} ms, then ${b2!.delay_ms} ms)`);
  t.ok(b2!.delay_ms! <= 10_000, 'and stays under the cap');

  mark = broker.log().length;
  const again = host.events.length;
  await broker.restart();
  await until('the reconnection', () => host.events.slice(again).some((e) => e.type === 'stream' && e.kind === 'mqtt' && e.state === 'streaming'));
  await broker.waitLog(/Received SUBSCRIBE from cortexd-in-/, 15_000, mark);
  t.equal(host.slot()?.plugin, plugin, 'the same plugin: the input actor restarted nothing');
  t.ok(host.ref().getSnapshot().hasTag('listening'), 'the input actor stayed listening');

  const pub2 = await publisher();
  await pub2.publishAsync('devices/r1/sensors/a', 'two', { qos: 1 });
  // A sentinel after it: once it is in, a duplicate of `two` would be too.
  await pub2.publishAsync('devices/r1/sensors/b', 'three', { qos: 1 });
  await pub2.endAsync();
  await until('the sentinel', () => host.messages.some((m) => m.text === 'three'));
  t.equal(host.messages.filter((m) => m.text === 'two').length, 1, 'the message after the restart arrived once');
  t.equal(host.messages.filter((m) => m.text === 'one').length, 1, 'the one before it was not delivered again');
  t.equal(subscribes(mark), 1, 'one SUBSCRIBE on the new connection');
  t.equal(
    broker
      .log()
      .slice(mark)
      .match(/New client connected from .* as cortexd-in-/g)?.length,
    1,
    'one client of the input on the restarted broker',
  );

  for (const state of ['connecting', 'streaming', 'backingOff'])
    t.ok(view.seen.includes(state), `the inspector saw stream:mqtt ${state} (${view.seen.join(' > ')})`);
});

t.test('fleet actor: the broker killed and restarted; its session actor fleet/mqtt backs off and resumes the persistent session', async (t) => {
  const bus = new AgentBus();
  const events: AgentEvent[] = [];
  bus.events$.subscribe((e) => events.push(e));
  const config = { modes: { idle: { agent_inputs: [], agent_actions: [] } } };
  const control = {
    configName: 'test',
    config,
    currentMode: () => 'idle',
    switchMode: async () => ({ ok: true }),
    pushText: () => true,
    setContext: () => undefined,
    estop: () => ({ ok: true }),
    release: async () => ({ ok: true }),
    safetyStatus: () => ({ estop: null }),
  } as unknown as FleetControl;
  const closing: Array<Promise<unknown>> = [];
  const view = inspected('fleet/mqtt');
  const root = setup({
    actors: {
      fleet: fleetLogic({
        settings: {
          url: broker.url,
          username: 'r1',
          password: USERS.r1,
          robotId: 'r1',
          prefix: 'cortexd',
          shareTranscripts: false,
          metricsIntervalMs: 0,
          commandMaxTtlMs: 300_000,
          sessionExpiryS: 3600,
          backoffMaxMs: 2000,
        },
        bus,
        control,
        logger,
        stateDir: mkdtempSync(join(tmpdir(), 'fleet-reconnect-')),
        stopReason: () => 'test over',
        track: (p) => void closing.push(p),
      }),
    },
  }).createMachine({ invoke: { id: 'fleet', src: 'fleet' } });
  const actor = createActor(root, { inspect: view.inspect }).start();
  t.teardown(() => actor.stop());
  const fleet = () => events.filter((e): e is FleetEv => e.type === 'fleet');
  const waitFleet = async (pred: (e: FleetEv) => boolean, what: string, from: number) => {
    await until(what, () => fleet().slice(from).some(pred));
    return fleet().slice(from).find(pred)!;
  };
  const subscribed = broker.waitLog(/Received SUBSCRIBE from cortexd_r1/, 15_000, 0);
  await waitFleet((e) => e.state === 'connected', 'first connection', 0);
  // The broker saves its sessions every second: wait for a save that includes the robot's subscription
  // (and for the next one to start: the log line comes before the write, and a SIGKILL mid-write loses it).
  await subscribed;
  await broker.saved();
  await broker.saved();
  const from = fleet().length;
  await broker.kill();
  await waitFleet((e) => e.state === 'backingOff' && e.attempt === 3, 'the third attempt backing off', from);
  const waits = fleet()
    .slice(from)
    .filter((e) => e.state === 'backingOff');
  t.ok(
    waits.every((e) => (e.delay_ms ?? 0) <= 2000),
    'every wait under backoff_max_ms',
  );
  const back = fleet().length;
  const logMark = broker.log().length;
  await broker.restart();
  const connected = await waitFleet((e) => e.state === 'connected', 'the reconnection', back);
  t.equal(connected.session_present, true, 'the broker kept the session: the channel does not subscribe again');
  t.equal(fleet().filter((e) => e.state === 'connected').length, 2, 'one reconnection');
  await broker.waitLog(/Received PUBLISH from cortexd_r1 .*cortexd\/r1\/state/, 15_000, logMark);
  t.notMatch(broker.log().slice(logMark), /Received SUBSCRIBE from cortexd_r1/, 'no second subscription');
  for (const state of ['connecting', 'streaming', 'backingOff'])
    t.ok(view.seen.includes(state), `the inspector saw fleet's mqtt ${state} (${view.seen.join(' > ')})`);

  // Stopping: the channel says `offline` with the reason before the connection closes.
  const watcher = await mqtt.connectAsync(broker.url, { protocolVersion: 5, username: 'operator', password: USERS.operator, reconnectPeriod: 0 });
  await watcher.subscribeAsync('cortexd/r1/status', { qos: 1 });
  const offline = new Promise<string>((resolve) =>
    watcher.on('message', (_topic, payload) => {
      const text = payload.toString();
      if (text.includes('offline')) resolve(text);
    }),
  );
  actor.stop();
  await Promise.all(closing);
  const guard = new Promise<string>((_, reject) => setTimeout(() => reject(new Error('no offline status within 15 s')), 15_000).unref());
  t.match(JSON.parse(await Promise.race([offline, guard])), { status: 'offline', robot: 'r1', reason: 'test over' });
  await watcher.endAsync();
});

t.test(
  "mqtt connector: its session actor (the action actor's child) reconnects after the broker restarts; stopping the action sends the stop before the link closes",
  async (t) => {
    const bus = new AgentBus();
    const events: AgentEvent[] = [];
    bus.events$.subscribe((e) => events.push(e));
    let device = await Watcher.start(broker.url, { username: 'r1', password: USERS.r1, filter: 'devices/r1/#' });
    const governor = startGovernor({ deadman_seconds: 600 }, { bus });
    t.teardown(() => governor.stop());
    const seen: string[] = [];
    const entry = actionEntry('move', 'mqtt', { url: broker.url, username: 'r1', password: USERS.r1, topic: 'devices/r1/motors', ack_timeout_seconds: 5 });
    const actor = createActor(actionLogic(), {
      input: {
        entry,
        deps: { logger, bus, mode: 'm', stateDir: mkdtempSync(join(tmpdir(), 'cortexd-state-')), write: () => {}, plugins: await allActionPlugins() },
        safety: governor.actor,
      },
      inspect: (e: InspectionEvent) => {
        if (e.type !== '@xstate.snapshot' || (e.actorRef as AnyActorRef).id !== 'session') return;
        const value = (e.snapshot as { value?: unknown }).value;
        const state = typeof value === 'string' ? value : value && typeof value === 'object' ? Object.keys(value)[0] : undefined;
        if (state && seen.at(-1) !== state) seen.push(state);
      },
    }).start();
    t.teardown(() => actor.stop());
    const handle = handleOf(actor, entry, { logger, bus, mode: 'm' });
    const settled = (from: number) =>
      until('the command settled', () => events.slice(from).some((e) => e.type === 'action' && (e.state === 'done' || e.state === 'failed'))).then(
        () => events.slice(from).find((e) => e.type === 'action' && (e.state === 'done' || e.state === 'failed')) as Extract<AgentEvent, { type: 'action' }>,
      );
    const dispatch = async (value: unknown) => {
      const from = events.length;
      handle.dispatch(value, 'model');
      return settled(from);
    };
    await until('the connector connected', () => seen.includes('streaming'));
    t.equal((await dispatch({ action: 'turn left' })).state, 'done');

    await device.close();
    await broker.kill();
    await until('the session actor backing off', () => seen.lastIndexOf('backingOff') > seen.indexOf('streaming'));
    t.match(
      await dispatch({ action: 'sit' }),
      { state: 'failed', error: /mqtt move: not connected/ },
      'a motion command is not queued while the broker is down',
    );
    const mark = seen.length;
    await broker.restart();
    await until('the session actor reconnected', () => seen.slice(mark).includes('streaming'));
    // The test's own device is a plain client without retries: a new one on the restarted broker.
    device = await Watcher.start(broker.url, { username: 'r1', password: USERS.r1, filter: 'devices/r1/#' });
    t.equal((await dispatch({ action: 'walk forward' })).state, 'done', 'commands go out again');
    await device.waitFor(
      (m) => (m.json as { value?: { action?: string } } | undefined)?.value?.action === 'walk forward',
      15_000,
      'the command after the restart',
    );
    t.equal(
      device.seen.filter((m) => (m.json as { value?: { action?: string } } | undefined)?.value?.action === 'sit').length,
      0,
      'the refused one never arrives late',
    );

    actor.stop();
    const stop = await device.waitFor((m) => (m.json as { stop?: boolean } | undefined)?.stop === true, 15_000, 'the stop on leaving');
    t.match(stop.json, { action: 'move', stop: true });
    t.ok(seen.includes('backingOff') && seen.includes('connecting'), `the inspector saw the connector's session actor (${seen.join(' > ')})`);
    await device.close();
  },
);
