// Benchmark: e-stop latch -> stop (zero Twist) on the DDS wire, and model answer -> command on the wire, through the whole agent, against a DDS echo round trip.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Agent } from '../dist/actors/agent/agent.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../dist/actors/plugin-registry.js';
import { DdsParticipant } from '../dist/devices/dds/participant.js';
import { AgentConfig } from '../dist/src/config/schema.js';
import { createLogger } from '../dist/src/log.js';

/*
 * The peer is the tests' ROS 2 base (test/fixtures/dds/ros2_base.c, built with idlc + gcc): it drives
 * on rt/cmd_vel and echoes every Twist it receives on rt/cmd_vel_echo. Everything runs on loopback.
 * - baseline: this process writes a Twist on rt/cmd_vel and reads the peer's echo (a DDS round trip).
 * - estop: the agent walks (a Twist repeated at command_hz); the e-stop latches; the time until the
 *   peer's echo of the first zero Twist. Added = that minus the baseline round trip (same percentile).
 * - model: the model's answer (bus `model.answer`) -> the peer's echo of the first walking Twist, minus the baseline.
 */
const QUICK = process.argv.includes('--quick');
const arg = process.argv.indexOf('--trials');
const TRIALS = arg > 0 ? Number(process.argv[arg + 1]) : QUICK ? 20 : 200;
const TARGET_MS = 10;
const ROOT = join(import.meta.dirname, '..');
const FIX = join(ROOT, 'test', 'fixtures', 'dds');
const URI = '<CycloneDDS><Domain Id="any"><General><Interfaces><NetworkInterface name="lo" multicast="true"/></Interfaces></General></Domain></CycloneDDS>';
const DOMAIN = 200 + (process.pid % 30);
process.env.CYCLONEDDS_URI = URI;

const until = async (what, fn, ms = 5000) => {
  const end = performance.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (performance.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setImmediate(r));
  }
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const stats = (xs) => ({ trials: xs.length, p50_ms: +pct(xs, 50).toFixed(3), p99_ms: +pct(xs, 99).toFixed(3), max_ms: +Math.max(...xs).toFixed(3) });

function buildPeer() {
  const h = createHash('sha256');
  for (const f of ['peer.h', 'ros2.idl', 'unitree.idl', 'ros2_base.c', 'go2.c']) h.update(readFileSync(join(FIX, f)));
  const out = join(ROOT, 'test-output', 'dds-peers', h.digest('hex').slice(0, 12));
  if (existsSync(join(out, 'ros2_base'))) return join(out, 'ros2_base');
  mkdirSync(join(ROOT, 'test-output', 'dds-peers'), { recursive: true });
  const tmp = mkdtempSync(join(ROOT, 'test-output', 'dds-peers', 'build-'));
  const run = (cmd, args) => {
    const r = spawnSync(cmd, args, { cwd: tmp, encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${cmd} failed: ${r.stderr}`);
  };
  for (const idl of ['ros2.idl', 'unitree.idl']) run('idlc', ['-x', 'final', join(FIX, idl)]);
  run('gcc', ['-O1', '-I.', `-I${FIX}`, '-o', 'ros2_base', join(FIX, 'ros2_base.c'), 'ros2.c', '-lddsc', '-lm']);
  run('gcc', ['-O1', '-I.', `-I${FIX}`, '-o', 'go2', join(FIX, 'go2.c'), 'unitree.c', '-lddsc', '-lm']);
  try {
    renameSync(tmp, out);
  } catch {}
  return join(out, 'ros2_base');
}

const peer = spawn(buildPeer(), [String(DOMAIN)], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env } });
let peerOut = '';
peer.stdout.setEncoding('utf8').on('data', (c) => (peerOut += c));
await until('the peer', () => peerOut.includes('ready'), 15_000);

// This process's own participant: the echo reader (both measures) and the baseline writer.
const p = DdsParticipant.open({ domain: DOMAIN });
const echoes = [];
const echo = p.reader('rt/cmd_vel_echo', 'geometry_msgs/msg/Twist', { reliable: true, depth: 100 });
echo.messages$.subscribe((m) => echoes.push({ vx: m.linear.x, wz: m.angular.z, at: performance.now() }));
const pinger = p.writer('rt/cmd_vel', 'geometry_msgs/msg/Twist');
await until('matched', () => pinger.matched$.value > 0 && echo.matched$.value > 0, 15_000);

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
const body = { robot: 'turtlebot4', binding: 'ros2', domain_id: DOMAIN };
const config = AgentConfig.parse({
  version: 'v1.0.5',
  name: 'bench',
  default_mode: 'drive',
  allow_manual_switching: false,
  mode_memory_enabled: false,
  api_key: '',
  system_governance: '',
  cortex_llm: { type: 'WalkerLLM' },
  safety: { deadman_seconds: 600, rate_limit: { commands: 1000, per_seconds: 1 }, estop_socket: { enabled: false } },
  modes: {
    drive: {
      display_name: 'Drive',
      description: 'd',
      system_prompt_base: 'drive',
      hertz: 0.1,
      agent_inputs: [{ type: 'TextInput', config: { source: 'stdin', descriptor: 'Voice' } }],
      agent_actions: [{ name: 'move', llm_label: 'move', connector: 'body', config: { ...body, step_m: 10, linear_speed_mps: 0.5, command_hz: 20 } }],
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
let answeredAt = 0;
let found = false;
agent.bus.events$.subscribe((e) => {
  if (e.type === 'model.answer') answeredAt = performance.now();
  if (e.type === 'stream' && e.kind === 'dds' && e.state === 'streaming') found = true;
});
agent.start();
await until('the robot found', () => found, 15_000);

const baseline = [];
const estop = [];
const model = [];
for (let i = 0; i < TRIALS; i++) {
  // Baseline: a Twist out, its echo back.
  let from = echoes.length;
  const t0 = performance.now();
  pinger.publish({ linear: { x: 0.001 * (i + 1), y: 0, z: 0 }, angular: { x: 0, y: 0, z: 0 } });
  const e0 = await until('the echo', () => echoes.slice(from).find((m) => Math.abs(m.vx - 0.001 * (i + 1)) < 1e-9));
  baseline.push(e0.at - t0);

  // The model answers walk forward: its Twist on the wire.
  from = echoes.length;
  answeredAt = 0;
  agent.pushText(`go ${i}`);
  const walk = await until('the walk on the wire', () => echoes.slice(from).find((m) => m.vx === 0.5), 10_000);
  model.push(walk.at - answeredAt);
  await until('moving', () => agent.safetyStatus().motion === 'moving');

  // The e-stop: latched here, the zero Twist's echo.
  from = echoes.length;
  const t1 = performance.now();
  agent.estop('bench', 'bench');
  const stop = await until('the stop on the wire', () => echoes.slice(from).find((m) => m.vx === 0 && m.wz === 0));
  estop.push(stop.at - t1);
  await until('latched', () => agent.safetyStatus().estop !== null);
  agent.release('bench');
}

agent.stop('bench over');
await agent.done;
echo.close();
pinger.close();
p.close();
peer.kill('SIGTERM');

const b = stats(baseline);
const e = stats(estop);
const m = stats(model);
const added = +(e.p99_ms - b.p99_ms).toFixed(3);
console.log(
  JSON.stringify(
    {
      baseline_dds_echo: b,
      estop_to_stop_echo: e,
      model_answer_to_command_echo: m,
      estop_p99_added_ms: added,
      model_p99_added_ms: +(m.p99_ms - b.p99_ms).toFixed(3),
      target_p99_added_ms: TARGET_MS,
      load_average_1m: +loadavg()[0].toFixed(2),
    },
    null,
    2,
  ),
);
const line = `dds: latch->stop echoed p50 ${e.p50_ms} ms p99 ${e.p99_ms} ms; model->command echoed p99 ${m.p99_ms} ms; DDS echo p50 ${b.p50_ms} ms p99 ${b.p99_ms} ms; p99 added ${added} ms over ${TRIALS} trials`;
console.log(added < TARGET_MS ? `${line} - within target` : `${line} - MISSED target: p99 added ${added} ms >= ${TARGET_MS} ms`);
process.exit(0);
