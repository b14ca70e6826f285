// Benchmark: N robot fleet channels (the channel module, not whole agents) on one mosquitto: state updates per second and their latency, command round trip, broker and client memory, against bare mqtt clients publishing the same messages in the same run.
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import mqtt from 'mqtt';
import { startMosquitto } from '../dist/test/support/mosquitto.js';
import { makeCommand } from '../dist/src/fleet/protocol.js';
import { finish, fork, option } from './lib/bench.js';

const ROBOTS = option('robots', 200, 10);
const SECONDS = option('seconds', 10, 1);
/** Mode changes per robot per second during the state phase. */
const RATE = option('rate', 5);
const COMMANDS = option('commands', 2000, 50);
const CONCURRENCY = option('concurrency', 20);
const TARGETS = { delivered_ratio: 0.99, state_p99_ms: 100, command_p99_ms: 100, client_mb_per_robot: 1 };

const percentile = (xs, p) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const round = (x, d = 1) => (x === null ? null : Math.round(x * 10 ** d) / 10 ** d);
const MB = (b) => round(b / 1024 / 1024);

const ids = Array.from({ length: ROBOTS }, (_, i) => `bench-${String(i).padStart(4, '0')}`);
const passwords = Object.fromEntries(ids.map((id, i) => [id, `pw-${i}-${Math.random().toString(36).slice(2, 10)}`]));
const shipped = (f) => readFileSync(new URL(`../systemd/mosquitto/${f}`, import.meta.url), 'utf8');

/** One phase: a fresh broker with the shipped ACL, the robots in a child process, the operator here. */
async function phase(kind) {
  const broker = await startMosquitto({ users: { ...passwords, operator: 'pw-operator' }, acl: shipped('cortexd.acl'), baseConf: shipped('cortexd.conf') });
  const brokerIdle = broker.rss();
  const child = fork(new URL('./lib/fleet-robots.js', import.meta.url), { stdio: 'inherit', execArgv: ['--expose-gc'] });
  const inbox = [];
  const waiting = [];
  child.on('message', (m) => {
    const w = waiting.findIndex((x) => x.cmd === m.cmd);
    if (w >= 0) waiting.splice(w, 1)[0].resolve(m);
    else inbox.push(m);
  });
  const next = (cmd) =>
    new Promise((resolve) => {
      const i = inbox.findIndex((m) => m.cmd === cmd);
      if (i >= 0) resolve(inbox.splice(i, 1)[0]);
      else waiting.push({ cmd, resolve });
    });
  await next('ready');

  const op = mqtt.connect(broker.url, { protocolVersion: 5, reconnectPeriod: 0, username: 'operator', password: 'pw-operator', clientId: 'bench-operator' });
  await new Promise((resolve, reject) => (op.once('connect', resolve), op.once('error', reject)));
  // The operator is the instrument: its small writes go out at once (no Nagle delay on its side).
  op.stream.setNoDelay(true);
  const stateLatency = [];
  let stateReceived = 0;
  let measuring = false;
  let stateStart = Infinity;
  const replies = new Map();
  op.on('message', (topic, payload, packet) => {
    if (topic.endsWith('/state')) {
      if (!measuring || packet.retain) return;
      // Only changes of the state phase (the states published at connect may still be arriving).
      const at = JSON.parse(payload.toString()).updated_at;
      if (at < stateStart) return;
      stateReceived += 1;
      stateLatency.push(Date.now() - at);
    } else if (topic.endsWith('/replies')) {
      const r = JSON.parse(payload.toString());
      replies.get(r.id)?.(r);
    }
  });
  await op.subscribeAsync({ 'cortexd/+/state': { qos: 1 }, 'cortexd/+/replies': { qos: 1 } });

  child.send({ cmd: 'connect', kind, url: broker.url, ids, passwords });
  const connected = await next('connected');

  // State: every robot changes mode RATE times a second for SECONDS.
  measuring = true;
  stateStart = Date.now();
  child.send({ cmd: 'state', seconds: SECONDS, rate: RATE });
  const stateDone = await next('state-done');
  // Let what is in flight arrive: until nothing came for 500 ms.
  for (let last = -1; last !== stateReceived; ) {
    last = stateReceived;
    await new Promise((r) => setTimeout(r, 500));
  }
  measuring = false;

  // Commands: `say` to a robot chosen in turn, CONCURRENCY in flight, each waiting for its reply.
  const rtt = [];
  let sent = 0;
  const t0 = Date.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (sent < COMMANDS) {
        const robot = ids[sent++ % ids.length];
        const cmd = makeCommand({ command: 'say', text: 'hello' }, 60_000);
        const start = performance.now();
        const replied = new Promise((resolve) => replies.set(cmd.id, resolve));
        op.publish(`cortexd/${robot}/commands`, JSON.stringify(cmd), { qos: 1 });
        const r = await replied;
        replies.delete(cmd.id);
        if (!r.ok) throw new Error(`command refused: ${r.reason}`);
        rtt.push(performance.now() - start);
      }
    }),
  );
  const commandMs = Date.now() - t0;

  child.send({ cmd: 'mem' });
  const mem = await next('mem');
  const brokerRss = broker.rss();
  child.send({ cmd: 'stop' });
  await new Promise((r) => child.once('exit', r));
  await op.endAsync();
  await broker.stop();
  return {
    connect_all_ms: connected.ms,
    state: {
      offered: stateDone.offered,
      received: stateReceived,
      delivered_ratio: round(stateReceived / stateDone.offered, 4),
      updates_per_s: Math.round(stateReceived / (stateDone.ms / 1000)),
      latency_ms: { p50: round(percentile(stateLatency, 50)), p99: round(percentile(stateLatency, 99)), max: round(Math.max(...stateLatency)) },
      client_cpu_ms_per_update: round(stateDone.cpuMs / stateDone.offered, 3),
    },
    commands: {
      n: rtt.length,
      per_s: Math.round(rtt.length / (commandMs / 1000)),
      round_trip_ms: { p50: round(percentile(rtt, 50), 2), p99: round(percentile(rtt, 99), 2), max: round(Math.max(...rtt), 2) },
    },
    memory_mb: { client_rss: MB(mem.rss), client_heap: MB(mem.heapUsed), broker_rss_idle: MB(brokerIdle), broker_rss: MB(brokerRss) },
  };
}

const channels = await phase('channels');
const bare = await phase('bare');
const extraPerRobotMb = round((channels.memory_mb.client_rss - bare.memory_mb.client_rss) / ROBOTS, 3);
const result = {
  robots: ROBOTS,
  seconds: SECONDS,
  rate_per_robot: RATE,
  machine: { cores: cpus().length, loadavg: loadavg().map((x) => round(x, 2)) },
  channels,
  bare_mqtt_baseline: bare,
  comparison: {
    updates_per_s_ratio: round(channels.state.updates_per_s / bare.state.updates_per_s, 3),
    state_p99_added_ms: round(channels.state.latency_ms.p99 - bare.state.latency_ms.p99),
    command_p99_added_ms: round(channels.commands.round_trip_ms.p99 - bare.commands.round_trip_ms.p99, 2),
    client_cpu_per_update_ratio: round(channels.state.client_cpu_ms_per_update / bare.state.client_cpu_ms_per_update, 2),
    client_extra_mb_per_robot: extraPerRobotMb,
    broker_rss_ratio: round(channels.memory_mb.broker_rss / bare.memory_mb.broker_rss, 2),
  },
  targets: TARGETS,
};
console.log(JSON.stringify(result, null, 2));
const missed = [];
if (channels.state.delivered_ratio < TARGETS.delivered_ratio) missed.push(`delivered ${channels.state.delivered_ratio} < ${TARGETS.delivered_ratio}`);
if (channels.state.latency_ms.p99 > TARGETS.state_p99_ms) missed.push(`state p99 ${channels.state.latency_ms.p99} ms > ${TARGETS.state_p99_ms}`);
if (channels.commands.round_trip_ms.p99 > TARGETS.command_p99_ms)
  missed.push(`command p99 ${channels.commands.round_trip_ms.p99} ms > ${TARGETS.command_p99_ms}`);
if (extraPerRobotMb > TARGETS.client_mb_per_robot) missed.push(`client memory +${extraPerRobotMb} MB per robot > ${TARGETS.client_mb_per_robot}`);
console.log(
  `fleet ${ROBOTS} robots: ${channels.state.updates_per_s} state updates/s (bare ${bare.state.updates_per_s}), state p99 ${channels.state.latency_ms.p99} ms (bare ${bare.state.latency_ms.p99}), ` +
    `command round trip p50 ${channels.commands.round_trip_ms.p50} / p99 ${channels.commands.round_trip_ms.p99} ms (bare ${bare.commands.round_trip_ms.p50} / ${bare.commands.round_trip_ms.p99}), ` +
    `client ${channels.memory_mb.client_rss} MB (bare ${bare.memory_mb.client_rss}), broker ${channels.memory_mb.broker_rss} MB (bare ${bare.memory_mb.broker_rss}); ` +
    (missed.length ? `MISSED target: ${missed.join('; ')}` : 'within target'),
);
await finish(0);
