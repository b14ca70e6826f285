// Benchmark: what recording costs a tick (in-process, with and without the recorder on the bus, same run), bytes per minute of the default agent in explore, and replay speed with the recorded model.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { AgentBus } from '../dist/src/cortex/events.js';
import { startCapture } from '../dist/src/record/capture.js';
import { MAIN, freePort, startAgent } from './lib/agent.js';
import { tickRig } from './lib/tick-rig.js';

import { finish, option } from './lib/bench.js';
const N = option('ticks', 3000, 200);
const SECONDS = option('seconds', 40, 2);
const dir = mkdtempSync(join(tmpdir(), 'cortexd-bench-record-'));

// --- 1. Tick cost: the tick-overhead set-up (10 inputs, 5 actions, an instant model), bus read by --events alone vs also by the recorder.
// Each tick is followed by one turn of the event loop, as a running agent's ticks are separated by its
// loop's timer: the recorder's file writes complete there. Without it the ticks chain on microtasks
// alone, no write completes, and the recorder drops most events (measuring a recorder that does not record).
const turn = () => new Promise((resolve) => setImmediate(resolve));
async function tickCost(record) {
  const bus = new AgentBus();
  bus.events$.subscribe(() => {});
  let events = 0;
  const capture = record ? await startCapture({ bus, record: { file: join(dir, `tick-${Date.now()}.mcap`) } }) : undefined;
  const { tick, stop } = await tickRig(bus, dir);
  for (let i = 0; i < 200; i++) {
    await tick();
    await turn();
  }
  const counted = bus.events$.subscribe(() => events++);
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  for (let i = 0; i < N; i++) {
    await tick();
    await turn();
  }
  counted.unsubscribe();
  // The recorder's writing loop runs between ticks on the same thread: its work counts, so wait for it.
  const stats = capture ? await capture.close() : undefined;
  const cpu = process.cpuUsage(t0);
  const wall = performance.now() - w0;
  await stop();
  return {
    cpu_ms_per_tick: (cpu.user + cpu.system) / 1000 / N,
    wall_ms_per_tick: wall / N,
    events,
    ...(stats ? { messages: stats.messages, dropped_events: stats.droppedEvents } : {}),
  };
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
const dropped = rec.reduce((n, r) => n + r.dropped_events, 0);
if (dropped > 0) targets.push(`the recorder dropped ${dropped} events of the timed ticks`);
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
await finish(0);
