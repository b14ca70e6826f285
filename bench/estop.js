// Benchmark: an e-stop sentence in on the motor controller's serial line -> STOP out on the same line, through the whole agent, against a serial echo round trip.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { SerialPort, ReadlineParser } from 'serialport';
import { z } from 'zod';
import { Agent } from '../dist/actors/agent/agent.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../dist/actors/plugin-registry.js';
import { startDeviceSession } from '../dist/actors/streams/device-session.js';
import { serialTiming } from '../dist/actors/streams/serial-session.js';
import { sharedSerialLine } from '../dist/devices/serial.js';
import { AgentConfig } from '../dist/src/config/schema.js';
import { createLogger } from '../dist/src/log.js';
import { cleanUp, finish, onCleanup, option, spawn, verdict } from './lib/bench.js';

const TRIALS = option('trials', 200, 30);
const TARGET_MS = 10;

const until = async (what, fn, ms = 5000) => {
  const end = performance.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
};

async function ptyPair(name) {
  const dir = mkdtempSync(join(tmpdir(), `cortexd-bench-${name}-`));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const robot = join(dir, 'robot');
  const peer = join(dir, 'peer');
  const proc = spawn('socat', [`pty,raw,echo=0,link=${robot}`, `pty,raw,echo=0,link=${peer}`], { stdio: 'ignore' });
  await until('socat', () => existsSync(robot) && existsSync(peer));
  return { robot, peer, proc };
}

/** The controller end: records when each line arrived; answers OK to MOVE lines. */
function openPeer(path, answerMoves) {
  return new Promise((resolve, reject) => {
    const lines = [];
    const port = new SerialPort({ path, baudRate: 115200 }, (err) => (err ? reject(err) : resolve({ port, lines })));
    onCleanup(() => new Promise((r) => (port.isOpen ? port.close(() => r()) : r())));
    port.pipe(new ReadlineParser({ delimiter: '\n' })).on('data', (line) => {
      lines.push({ line, at: performance.now() });
      if (answerMoves && line.startsWith('MOVE ')) port.write('OK\n');
    });
  });
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const stats = (xs) => ({ trials: xs.length, p50_ms: +pct(xs, 50).toFixed(3), p99_ms: +pct(xs, 99).toFixed(3), max_ms: +Math.max(...xs).toFixed(3) });

// Baseline: the robot end echoes every line back through the same serial stack (shared line, line parser),
// its port opened as the runtime opens one: a device session of the one reconnect engine holds it.
const echoPair = await ptyPair('echo');
const echoLine = sharedSerialLine({ binding: 'serialport', path: echoPair.robot, baud_rate: 115200 });
const echoSub = echoLine.lines().subscribe((l) => void echoLine.write(`${l}\n`).catch(() => undefined));
onCleanup(() => echoSub.unsubscribe());
const echoPeer = await openPeer(echoPair.peer, false);
const echoSession = startDeviceSession(echoLine.device, 'serial', { timing: serialTiming(echoLine) });
onCleanup(() => echoSession.stop());
await until('echo port open', () => echoLine.port()?.isOpen, 10_000);

// The agent: move on the motor controller's line, the e-stop sentence read on the same line.
const motorPair = await ptyPair('motor');
const motorPeer = await openPeer(motorPair.peer, true);
const walker = {
  type: 'WalkerLLM',
  description: 'walks forward on every call',
  schema: z.looseObject({}),
  needs: () => [],
  create: () => ({
    type: 'WalkerLLM',
    ask: async () => ({ toolCalls: [{ name: 'move', arguments: { action: 'walk forward' } }], model: 'walker', latencyMs: 0 }),
  }),
};
const config = AgentConfig.parse({
  version: 'v1.0.5',
  name: 'bench',
  default_mode: 'drive',
  allow_manual_switching: false,
  mode_memory_enabled: false,
  api_key: '',
  system_governance: '',
  cortex_llm: { type: 'WalkerLLM' },
  safety: { deadman_seconds: 600, rate_limit: { commands: 1000, per_seconds: 1 }, estop_serial: { path: motorPair.robot }, estop_socket: { enabled: false } },
  modes: {
    drive: {
      display_name: 'Drive',
      description: 'd',
      system_prompt_base: 'drive',
      hertz: 100,
      agent_inputs: [{ type: 'TextInput', config: { source: 'stdin', descriptor: 'Voice' } }],
      agent_actions: [{ name: 'move', llm_label: 'move', connector: 'serial', config: { path: motorPair.robot } }],
    },
  },
});
const loaded = { file: 'bench', configName: 'bench', legacy: false, config, apiKey: '', addresses: {}, warnings: [] };
const plugins = await resolvePlugins(withPlugins(builtinPlugins, { llms: [walker] }), config);
const agent = new Agent({
  loaded,
  plugins,
  logger: createLogger({ level: 'silent', pretty: false }),
  stateDir: mkdtempSync(join(tmpdir(), 'cortexd-bench-state-')),
  memory: false,
  runtimeDir: false,
});
let ticks = 0;
agent.bus.events$.subscribe((e) => e.type === 'tick' && ticks++);
agent.start();
onCleanup(async () => {
  agent.stop('bench over');
  await agent.done;
});
await until('the first tick', () => ticks > 0, 10_000);

const baseline = [];
const estop = [];
for (let i = 0; i < TRIALS; i++) {
  // Baseline: a line out from the peer, echoed back.
  const from = echoPeer.lines.length;
  const t0 = performance.now();
  echoPeer.port.write(`PING ${i}\n`);
  const echo = await until('the echo', () => echoPeer.lines.slice(from).find((l) => l.line === `PING ${i}`));
  baseline.push(echo.at - t0);

  // The robot moves (MOVE acknowledged), then the button: ESTOP in, STOP out.
  const seen = motorPeer.lines.length;
  agent.pushText(`go ${i}`);
  await until('MOVE on the wire', () => motorPeer.lines.slice(seen).some((l) => l.line.startsWith('MOVE ')));
  await until('the move settled', () => agent.safetyStatus().motion === 'moving');
  await new Promise((r) => setTimeout(r, 2)); // the OK answer reaches the connector
  const before = motorPeer.lines.length;
  const t1 = performance.now();
  motorPeer.port.write('ESTOP\n');
  const stop = await until('STOP on the wire', () => motorPeer.lines.slice(before).find((l) => l.line === 'STOP'));
  estop.push(stop.at - t1);
  await until('latched', () => agent.safetyStatus().estop !== null);
  agent.release('bench');
}

await cleanUp();

const b = stats(baseline);
const e = stats(estop);
const added = +(e.p99_ms - b.p99_ms).toFixed(3);
console.log(
  JSON.stringify(
    {
      baseline_serial_echo: b,
      estop_to_stop: e,
      p50_added_ms: +(e.p50_ms - b.p50_ms).toFixed(3),
      p99_added_ms: added,
      target_p99_added_ms: TARGET_MS,
      load_average_1m: +loadavg()[0].toFixed(2),
    },
    null,
    2,
  ),
);
verdict(
  `estop: ESTOP->STOP p50 ${e.p50_ms} ms p99 ${e.p99_ms} ms; serial echo p50 ${b.p50_ms} ms p99 ${b.p99_ms} ms; p99 added ${added} ms over ${TRIALS} trials`,
  added < TARGET_MS ? [] : [`p99 added ${added} ms >= ${TARGET_MS} ms`],
);
await finish(0);
