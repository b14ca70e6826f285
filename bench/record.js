// Benchmark: what recording costs a tick (in-process, with and without the recorder on the bus, same run), bytes per minute of the default agent in explore, and replay speed with the recorded model.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { EMPTY } from 'rxjs';
import { pino } from 'pino';
import { runTick } from '../dist/actors/tick.js';
import { createActionHandle } from '../dist/actors/actions/action.js';
import { AgentBus } from '../dist/src/cortex/events.js';
import { toolsForMode } from '../dist/src/cortex/tools.js';
import { builtinPlugins, resolvePlugins } from '../dist/actors/plugins.js';
import { startCapture } from '../dist/src/record/capture.js';
import { MAIN, freePort, startAgent } from './lib/agent.js';

const arg = (name, def) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : def;
};
const N = arg('ticks', 3000);
const SECONDS = arg('seconds', 40);
const logger = pino({ level: 'silent' });
const dir = mkdtempSync(join(tmpdir(), 'cortexd-bench-record-'));

// --- 1. Tick cost: the tick-overhead set-up (10 inputs, 5 actions, an instant model), bus read by --events alone vs also by the recorder.
async function tickCost(record) {
  const bus = new AgentBus();
  bus.events$.subscribe(() => {});
  const capture = record ? await startCapture({ bus, record: { file: join(dir, `tick-${Date.now()}.mcap`) } }) : undefined;
  const entries = ['speak:speak', 'face:emotion', 'move:move', 'face:face2', 'move:move2'].map((s) => {
    const [name, llm_label] = s.split(':');
    return { name, llm_label, connector: 'console', implementation: 'passthrough', config: {}, exclude_from_prompt: false };
  });
  const mode = { system_prompt_base: 'You are a robot.', agent_actions: entries, hertz: 100 };
  const plugins = await resolvePlugins(builtinPlugins, { modes: { bench: { agent_inputs: [], agent_actions: entries, simulators: [] } } });
  const handles = entries.map((e) => createActionHandle(e, { logger, bus, mode: 'bench', stateDir: dir, write: () => {}, plugins }));
  let seq = 0;
  const inputs = Array.from({ length: 10 }, (_, i) => ({
    finals: [],
    plugin: {
      type: `Input${i}`,
      descriptor: i === 0 ? 'Voice' : `Sensor ${i}`,
      listen: () => EMPTY,
      poll: async () => undefined,
      rawToText: () => undefined,
      formattedLatestBuffer: () => `reading ${i} at tick ${seq}`,
      stop: async () => {},
    },
  }));
  const answer = {
    toolCalls: [
      { name: 'speak', arguments: { sentence: 'Hello there.' } },
      { name: 'emotion', arguments: { emotion: 'joy' } },
      { name: 'move', arguments: { action: 'sit' } },
    ],
    model: 'instant',
    latencyMs: 0,
  };
  const deps = {
    config: { system_governance: 'Obey the laws.', system_prompt_examples: 'Say hello.', system_prompt_base: '' },
    modeName: 'bench',
    mode,
    inputs,
    handles: () => handles,
    llm: { type: 'instant', ask: async () => answer },
    toolsForMode,
    bus,
    logger,
    keywords: () => false,
    skipIdle: true,
    maxToolRounds: 3,
  };
  const signal = new AbortController().signal;
  // The same call as bench/tick-overhead.js makes.
  const tick = () => runTick(deps, { seq: seq++, slot: seq, dueAt: 0, startedAt: 0, latenessMs: 0, skipped: 0, wake: false }, signal);
  for (let i = 0; i < 200; i++) await tick();
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  for (let i = 0; i < N; i++) await tick();
  // The recorder's writing loop runs between ticks on the same thread: its work counts, so wait for it.
  const stats = capture ? await capture.close() : undefined;
  const cpu = process.cpuUsage(t0);
  const wall = performance.now() - w0;
  for (const h of handles) await h.stop?.();
  return { cpu_ms_per_tick: (cpu.user + cpu.system) / 1000 / N, wall_ms_per_tick: wall / N, messages: stats?.messages };
}

const base = [];
const rec = [];
for (let round = 0; round < 3; round++) {
  base.push(await tickCost(false));
  rec.push(await tickCost(true));
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const baseMs = median(base.map((r) => r.cpu_ms_per_tick));
const recMs = median(rec.map((r) => r.cpu_ms_per_tick));
const overhead = recMs / baseMs - 1;

// --- 2. The default agent in explore with --record for SECONDS: bytes per minute, then replay speed.
const cfgText = readFileSync(join(import.meta.dirname, '..', 'config', 'default.json5'), 'utf8')
  .replace(/default_mode: "idle"/, 'default_mode: "explore"')
  .replaceAll('{ type: "WebSim" }', `{ type: "WebSim", config: { port: ${await freePort()} } }`);
const cfg = join(import.meta.dirname, '..', 'config', `bench-record-${process.pid}.json5`);
writeFileSync(cfg, cfgText);
const file = join(dir, 'explore.mcap');
let bytesPerMinute = NaN;
let replay = { speed: NaN, same: false, simulated_s: NaN };
try {
  const run = startAgent(cfg, join(dir, 'state'), {}, ['--record', file, '--fresh']);
  await run.waitFor((e) => e.type === 'tick', 60_000, 'the first tick');
  const first = Date.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  await run.stop();
  const minutes = (Date.now() - first) / 60_000;
  bytesPerMinute = statSync(file).size / minutes;
  const r = spawnSync(process.execPath, [MAIN, 'replay', file, '--json'], { encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 });
  const out = JSON.parse(r.stdout);
  replay = { speed: out.simulatedMs / out.wallMs, same: out.same, simulated_s: out.simulatedMs / 1000, wall_s: out.wallMs / 1000 };
} finally {
  rmSync(cfg, { force: true });
}

const targets = [];
if (!(overhead <= 0.1)) targets.push(`tick overhead +${(overhead * 100).toFixed(1)} % (target +10 %)`);
if (!(replay.speed >= 50)) targets.push(`replay ${replay.speed.toFixed(0)}x real time (target 50x)`);
const result = {
  tick: { ticks: N, base_cpu_ms: +baseMs.toFixed(4), record_cpu_ms: +recMs.toFixed(4), overhead_pct: +(overhead * 100).toFixed(1), rounds: { base, rec } },
  explore: { seconds: SECONDS, bytes_per_minute: Math.round(bytesPerMinute), ten_minutes_mb: +((bytesPerMinute * 10) / 1024 / 1024).toFixed(1) },
  replay,
};
console.log(JSON.stringify(result, null, 2));
console.log(
  `record: tick ${baseMs.toFixed(3)} -> ${recMs.toFixed(3)} ms CPU (+${(overhead * 100).toFixed(1)} %), explore ${(bytesPerMinute / 1024 / 1024).toFixed(2)} MB/min (${result.explore.ten_minutes_mb} MB per 10 min), replay ${replay.speed.toFixed(0)}x real time (${replay.same ? 'same decisions' : 'decisions differ'}); ${targets.length ? `MISSED target: ${targets.join('; ')}` : 'within target'}`,
);
