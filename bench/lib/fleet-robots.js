// A child process of bench/fleet.js: N robots on one broker, either N fleet channel modules (each with its own bus) or N bare mqtt clients publishing the same messages.
import mqtt from 'mqtt';
import { FleetChannel } from '../../dist/src/fleet/channel.js';
import { AgentBus } from '../../dist/src/cortex/events.js';
import { runMqttSession } from '../../dist/actors/streams/mqtt-session.js';

const MODES = ['idle', 'busy'];
const config = {
  modes: {
    idle: { agent_inputs: [{ type: 'TextInput' }], agent_actions: [{ llm_label: 'speak' }] },
    busy: { agent_inputs: [], agent_actions: [] },
  },
};

/** A fleet channel module with a minimal agent behind it: a bus, a mode, typed text accepted. */
function channelRobot(url, id, password) {
  const bus = new AgentBus();
  let mode = 'idle';
  let since = Date.now();
  const control = {
    configName: 'bench',
    config,
    currentMode: () => mode,
    switchMode: async (to) => {
      const from = mode;
      mode = to;
      bus.emit({ type: 'mode.changed', at: Date.now(), from, to, trigger: 'manual', reason: 'bench' });
      return { ok: true };
    },
    pushText: () => true,
    setContext: () => {},
    safetyStatus: () => ({ estop: null }),
  };
  const channel = new FleetChannel({
    settings: {
      url,
      username: id,
      password,
      robotId: id,
      prefix: 'cortexd',
      shareTranscripts: false,
      metricsIntervalMs: 10_000,
      commandMaxTtlMs: 300_000,
      sessionExpiryS: 3600,
      backoffMaxMs: 30_000,
    },
    bus,
    control,
    version: 'bench',
  });
  let connected = false;
  bus.events$.subscribe((e) => {
    if (e.type === 'fleet' && e.state === 'connected') connected = true;
  });
  channel.start();
  const link = runMqttSession(channel.connection);
  return {
    connected: () => connected,
    /** One change of mode, as the mode machine reports it on the bus. */
    change() {
      const from = mode;
      mode = MODES[(MODES.indexOf(mode) + 1) % 2];
      since = Date.now();
      bus.emit({ type: 'mode.changed', at: since, from, to: mode, trigger: 'manual', reason: 'bench' });
    },
    stop: () => channel.stop('bench over').then(() => link.stop()),
  };
}

/** A bare client doing what the channel does on the wire: retained state and an event per change, a reply per command. */
function bareRobot(url, id, password) {
  const t = (k) => `cortexd/${id}/${k}`;
  const client = mqtt.connect(url, {
    protocolVersion: 5,
    reconnectPeriod: 0,
    queueQoSZero: false,
    clientId: `cortexd_${id}`,
    clean: false,
    username: id,
    password,
    properties: { sessionExpiryInterval: 3600 },
    will: { topic: t('status'), payload: Buffer.from(JSON.stringify({ status: 'offline', robot: id, reason: 'connection lost' })), qos: 1, retain: true },
  });
  let mode = 'idle';
  const state = {
    robot: id,
    config: 'bench',
    version: 'bench',
    mode,
    mode_since: Date.now(),
    modes: MODES,
    health: {
      ok: true,
      inputs: { TextInput: { state: 'ok', since: Date.now() } },
      actions: { speak: { state: 'ok', since: Date.now() } },
      streams: {},
      tool_servers: {},
    },
    battery: null,
    position: null,
    estop: { available: false, engaged: null },
    updated_at: Date.now(),
  };
  client.on('connect', (connack) => {
    client.publish(t('status'), JSON.stringify({ status: 'online', robot: id, at: Date.now(), version: 'bench', config: 'bench' }), { qos: 1, retain: true });
    client.publish(t('state'), JSON.stringify(state), { qos: 1, retain: true });
    if (!connack.sessionPresent) client.subscribe({ [t('commands')]: { qos: 1 } });
  });
  client.on('message', (topic, payload) => {
    const cmd = JSON.parse(payload.toString());
    client.publish(t('replies'), JSON.stringify({ id: cmd.id, command: cmd.command, ok: true, robot: id, at: Date.now() }), { qos: 1 });
  });
  client.on('error', () => {});
  return {
    connected: () => client.connected,
    change() {
      const from = mode;
      mode = MODES[(MODES.indexOf(mode) + 1) % 2];
      const at = Date.now();
      state.mode = mode;
      state.mode_since = at;
      state.updated_at = at;
      state.health.inputs = mode === 'idle' ? { TextInput: { state: 'ok', since: at } } : {};
      state.health.actions = mode === 'idle' ? { speak: { state: 'ok', since: at } } : {};
      client.publish(t('state'), JSON.stringify(state), { qos: 1, retain: true });
      client.publish(t('events'), JSON.stringify({ type: 'mode.changed', at, from, to: mode, trigger: 'manual', reason: 'bench' }), { qos: 0 });
    },
    stop: async () => {
      await client
        .publishAsync(t('status'), JSON.stringify({ status: 'offline', robot: id, at: Date.now(), reason: 'bench over' }), { qos: 1, retain: true })
        .catch(() => {});
      await client.endAsync();
    },
  };
}

let robots = [];

const rss = () => process.memoryUsage().rss;

process.on('message', async (m) => {
  if (m.cmd === 'connect') {
    const t0 = Date.now();
    const make = m.kind === 'channels' ? channelRobot : bareRobot;
    robots = m.ids.map((id) => make(m.url, id, m.passwords[id]));
    while (!robots.every((r) => r.connected())) await new Promise((r) => setTimeout(r, 20));
    process.send({ cmd: 'connected', ms: Date.now() - t0, rss: rss() });
  } else if (m.cmd === 'state') {
    // Every robot changes mode `rate` times a second, spread evenly over the fleet (a fixed schedule, no drift).
    const cpu0 = process.cpuUsage();
    const start = Date.now();
    const periodMs = 1000 / (m.rate * robots.length);
    let done = 0;
    const total = Math.floor(m.seconds * m.rate * robots.length);
    await new Promise((resolve) => {
      const timer = setInterval(() => {
        const due = Math.min(total, Math.floor((Date.now() - start) / periodMs));
        while (done < due) robots[done++ % robots.length].change();
        if (done >= total) {
          clearInterval(timer);
          resolve();
        }
      }, 5);
    });
    const cpu = process.cpuUsage(cpu0);
    process.send({ cmd: 'state-done', offered: total, ms: Date.now() - start, cpuMs: (cpu.user + cpu.system) / 1000, rss: rss() });
  } else if (m.cmd === 'mem') {
    global.gc?.();
    process.send({ cmd: 'mem', rss: rss(), heapUsed: process.memoryUsage().heapUsed });
  } else if (m.cmd === 'stop') {
    await Promise.all(robots.map((r) => r.stop()));
    process.exit(0);
  }
});
process.send({ cmd: 'ready' });
