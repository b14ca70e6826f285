// The MQTT middleware against mosquitto: MqttInput in the real input actor (template, its session actor reconnecting after a broker restart, a refused password) and the mqtt connector in the real action actor.
import { startGovernor } from '../helpers/governor.js';
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { filter, firstValueFrom } from 'rxjs';
import { createActionHandle } from '../../actors/actions/action.js';
import { createMqttInput } from '../../actors/inputs/mqtt-input.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { haveMosquitto, type Broker } from '../support/mosquitto.js';
import type { Plugins } from '../../actors/plugin-registry.js';
import { hostInput } from '../helpers/input-host.js';
import { actionEntry, allActionPlugins } from '../helpers/plugins.js';
import { USERS, Watcher, fleetBroker } from '../helpers/fleet.js';

type ActionEv = Extract<AgentEvent, { type: 'action' }>;
if (!haveMosquitto()) throw new Error('mosquitto, mosquitto_passwd and openssl are missing (bash scripts/setup.sh --tests installs them)');
const logger = pino({ level: 'silent' });
const fastRestart = { initialMs: 50, maxMs: 200, healthyMs: 60_000 };

/** `p`, or a rejection naming `what` after `ms`. */
function within<T>(p: Promise<T>, what: string, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms)))]).finally(() =>
    clearTimeout(timer),
  );
}

let broker: Broker;
let plugins: Plugins;
t.before(async () => {
  broker = await fleetBroker({ tls: true });
  plugins = await allActionPlugins();
});
t.teardown(() => broker?.stop());

/** The robot r1's own device topics (the shipped ACL: devices/<user>/#). */
const input = (config: Record<string, unknown>, restart = fastRestart) =>
  hostInput(
    'MqttInput',
    (callbacks) =>
      createMqttInput(
        { url: broker.tlsUrl, ca_file: broker.caFile, username: 'r1', password: USERS.r1, ...config },
        { logger, stateDir: tmpdir(), signal: new AbortController().signal, ...callbacks },
      ),
    restart,
  );

t.test('MqttInput: each message becomes a prompt line through the template; after a broker restart its session actor reconnects', async (t) => {
  // The broker logs each subscription: publish once the input's is in.
  const subscribed = (from: number) => broker.waitLog(/Received SUBSCRIBE from cortexd-in-[0-9a-f]+\n\d+: \s*devices\/r1\/sensors\/\+ \(QoS 0\)/, 15_000, from);
  let mark = broker.log().length;
  const host = input({ topics: ['devices/r1/sensors/+'], template: '{payload.name} reads {payload.value} ({topic})', final: true });
  t.teardown(() => host.stop());
  await subscribed(mark);
  const device = await Watcher.start(broker.tlsUrl!, { caFile: broker.caFile!, username: 'r1', password: USERS.r1, filter: 'devices/r1/#' });
  const message = within(firstValueFrom(host.bus.events$.pipe(filter((e) => e.type === 'input'))), 'the first message');
  await device.client.publishAsync('devices/r1/sensors/t1', JSON.stringify({ name: 'thermo', value: 21.5 }), { qos: 1 });
  await device.close();
  const first = await message;
  t.match(first, { input: 'MqttInput', text: 'thermo reads 21.5 (devices/r1/sensors/t1)', final: true });
  t.equal(host.slot()?.plugin.formattedLatestBuffer(), 'MQTT: thermo reads 21.5 (devices/r1/sensors/t1)');

  const mqttState = (state: string) =>
    within(firstValueFrom(host.bus.events$.pipe(filter((e) => e.type === 'stream' && e.kind === 'mqtt' && e.state === state))), `the session actor ${state}`);
  const lost = mqttState('connecting');
  const back = lost.then(() => mqttState('streaming'));
  const plugin = host.slot()?.plugin;
  mark = broker.log().length;
  await broker.restart();
  t.match(await lost, { input: 'MqttInput', reason: /closed/ });
  // The session actor reconnected the same plugin (one retry layer: the input actor restarted nothing); it subscribes again on the restarted broker.
  await back;
  t.equal(host.slot()?.plugin, plugin, 'the same plugin listens on');
  t.ok(host.ref().getSnapshot().hasTag('listening'), 'the input actor never left listening');
  await subscribed(mark);
  const again = await Watcher.start(broker.tlsUrl!, { caFile: broker.caFile!, username: 'r1', password: USERS.r1, filter: 'devices/r1/#' });
  t.teardown(() => again.close());
  const next = within(firstValueFrom(host.bus.events$.pipe(filter((e) => e.type === 'input'))), 'a message after the restart');
  await again.client.publishAsync('devices/r1/sensors/t2', 'not json', { qos: 1 });
  t.match(await next, { text: ' reads  (devices/r1/sensors/t2)'.trim() });
});

t.test('MqttInput: a refused password stops the input with the reason (no retries)', async (t) => {
  const host = input({ topics: ['devices/r1/#'], password: 'wrong-password' });
  t.teardown(() => host.stop());
  const stopped = await within(
    firstValueFrom(host.bus.events$.pipe(filter((e): e is Extract<AgentEvent, { type: 'error' }> => e.type === 'error'))),
    'the refusal',
  );
  t.match(stopped.message, /^input MqttInput stopped: mqtts:\/\/127\.0\.0\.1:\d+ refused the connection of user "r1": not authorized/);
  t.notMatch(stopped.message, /wrong-password/);
  t.ok(host.ref().getSnapshot().hasTag('failed'), 'the input actor gave up');
});

function action(name: 'move' | 'face' | 'speak', config: Record<string, unknown>) {
  const bus = new AgentBus();
  const entry = actionEntry(name, 'mqtt', {
    url: broker.tlsUrl,
    ca_file: broker.caFile,
    username: 'r1',
    password: USERS.r1,
    ack_timeout_seconds: 5,
    ...config,
  });
  // Motion (move) passes a safety governor, as in an agent; its dead-man timer is out of the way here.
  const governor = startGovernor({ deadman_seconds: 600 }, { bus });
  t.teardown(() => governor.stop());
  const handle = createActionHandle(
    entry,
    { logger, bus, mode: 'm', stateDir: mkdtempSync(join(tmpdir(), 'cortexd-state-')), write: () => {}, plugins },
    { safety: governor.actor },
  );
  t.teardown(() => handle.stop());
  const settled = () =>
    within(firstValueFrom(bus.events$.pipe(filter((e): e is ActionEv => e.type === 'action' && ['done', 'failed'].includes(e.state)))), `${name} settled`);
  return { handle, settled, governor };
}

t.test('mqtt connector: each command is one JSON message on its topic; a topic the ACL denies fails the command with the reason', async (t) => {
  const device = await Watcher.start(broker.tlsUrl!, { caFile: broker.caFile!, username: 'r1', password: USERS.r1, filter: 'devices/r1/#' });
  t.teardown(() => device.close());
  const move = action('move', { topic: 'devices/r1/motors' });
  let done = move.settled();
  move.handle.dispatch({ action: 'turn left' }, 'model');
  t.equal((await done).state, 'done', 'done once the broker acknowledged it');
  const got = await device.waitFor((m) => m.topic === 'devices/r1/motors', 10_000, 'the move command');
  t.match(got.json, { action: 'move', value: { action: 'turn left' }, id: /^[0-9a-f-]{36}$/, at: Number });
  // The e-stop reaches an MQTT-driven robot: the governor's halt publishes the stop; later motion is refused.
  move.governor.actor.send({ type: 'safety.estop', reason: 'test', source: 'test' });
  const stop = await device.waitFor((m) => m.topic === 'devices/r1/motors' && (m.json as { stop?: boolean } | undefined)?.stop === true, 10_000, 'the stop');
  t.match(stop.json, { action: 'move', stop: true, at: Number });
  done = move.settled();
  move.handle.dispatch({ action: 'walk forward' }, 'model');
  t.match(await done, { state: 'failed', error: /emergency stop/i }, 'motion is refused while latched');
  move.governor.actor.send({ type: 'safety.release', source: 'test' });

  const face = action('face', { topic: 'devices/r1/face', qos: 0 });
  done = face.settled();
  face.handle.dispatch({ emotion: 'joy' }, 'model');
  t.equal((await done).state, 'done');
  t.match((await device.waitFor((m) => m.topic === 'devices/r1/face')).json, { action: 'face', value: { emotion: 'joy' } });

  const denied = action('speak', { topic: 'devices/r2/speaker' });
  done = denied.settled();
  denied.handle.dispatch({ sentence: 'hello' }, 'model');
  const failed = await done;
  t.equal(failed.state, 'failed');
  t.match(failed.error, /mqtt speak: the broker refused to publish to devices\/r2\/speaker: not authorized/);

  const unreachable = action('move', { url: 'mqtt://127.0.0.1:1', topic: 'devices/r1/motors', ack_timeout_seconds: 0.5 });
  done = unreachable.settled();
  unreachable.handle.dispatch({ action: 'sit' }, 'model');
  const down = await done;
  t.equal(down.state, 'failed');
  t.match(down.error, /mqtt move: not connected to mqtt:\/\/127\.0\.0\.1:1 \(mqtt:\/\/127\.0\.0\.1:1 refused the TCP connection/);
});
