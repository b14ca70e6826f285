// Benchmark: time from process start to the first tick of the default agent, against a bare node start; and until WebSim listens (it and the embedded service start after the first tick).
import { finish, quick, spawn } from './lib/bench.js';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RUNS = Number(process.env.BENCH_RUNS ?? (quick ? 1 : 5));
/** Issue 29's target: the first tick at most this many ms after what a bare node start takes (same run). */
const TARGET_MS = 300;
const main = join(import.meta.dirname, '..', 'dist', 'cli', 'main.js');

/*
 * CPU time (user + system) is measured in separate runs, with a preload that writes the process's
 * CPU time to fd 3 when the first tick line is written (or at exit, for the baseline): on this
 * shared machine waiting for a core inflates wall time, not CPU time. The verdict is on wall time.
 */
const CPU_HOOK = `data:text/javascript,import{writeSync}from"node:fs";const cpu=()=>{try{const u=process.cpuUsage();writeSync(3,String(u.user+u.system))}catch{}};const w=process.stdout.write.bind(process.stdout);process.stdout.write=(c,...r)=>{if(String(c).includes('"type":"tick"'))cpu();return w(c,...r)};process.on("exit",cpu)`;

/**
 * ms from spawn until `ready(line)` is true for a stdout line (or the process exits, for the baseline); with `cpu`, the CPU ms until then instead.
 * With `then`, the run goes on until `then(line)` too (at most 10 s) and resolves `{ first, after }` (ms; `after` null when `then` never matched).
 */
function time(args, ready, cpu = false, then = undefined) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    // The run's state and temporary files (the service's working directory) in one directory, removed after the run.
    const dir = mkdtempSync(join(tmpdir(), 'cortexd-startup-'));
    mkdirSync(join(dir, 'tmp'));
    const env = { ...process.env, CORTEX_STATE_DIR: dir, TMPDIR: join(dir, 'tmp'), CORTEX_LOG_LEVEL: 'warn', NOTIFY_SOCKET: '' };
    const child = spawn(process.execPath, cpu ? [`--import=${CPU_HOOK}`, ...args] : args, { env, stdio: ['pipe', 'pipe', 'ignore', ...(cpu ? ['pipe'] : [])] });
    let buf = '';
    let done = false;
    let report = '';
    let first;
    const finish = (second = null) => {
      done = true;
      if (!cpu) resolve(then ? { first, after: second } : performance.now() - t0);
      child.kill('SIGKILL');
    };
    const guard = then ? setTimeout(() => !done && first !== undefined && finish(), 10_000) : undefined;
    if (cpu) child.stdio[3].on('data', (d) => (report += d));
    child.stdout.setEncoding('utf8').on('data', (c) => {
      buf += c;
      for (const line of buf.split('\n').slice(0, -1)) {
        if (done || !ready) continue;
        if (first === undefined && ready(line)) {
          first = performance.now() - t0;
          if (!then) finish();
        }
        if (then && first !== undefined && then(line)) finish(performance.now() - t0);
      }
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
    });
    child.on('close', () => {
      clearTimeout(guard);
      rmSync(dir, { recursive: true, force: true });
      if (!done && ready) return reject(new Error('exited before the first tick'));
      if (cpu) return resolve(Number.parseInt(report, 10) / 1000);
      if (!ready) resolve(performance.now() - t0);
    });
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const run = [main, 'run', 'default', '--events', '--for', '10s'];
const isTick = (l) => l.includes('"type":"tick"');
const isWebSim = (l) => l.includes('"type":"simulator.ready"');
const baseline = [];
const firstTick = [];
const webSimReady = [];
const baselineCpu = [];
const firstTickCpu = [];
for (let i = 0; i < RUNS; i++) {
  baseline.push(await time(['-e', '0']));
  const t = await time(run, isTick, false, isWebSim);
  firstTick.push(t.first);
  if (t.after !== null) webSimReady.push(t.after);
}
for (let i = 0; i < RUNS; i++) {
  baselineCpu.push(await time(['-e', '0'], undefined, true));
  firstTickCpu.push(await time(run, isTick, true));
}
const result = {
  runs: RUNS,
  bare_node_ms: baseline.map((x) => +x.toFixed(1)),
  first_tick_ms: firstTick.map((x) => +x.toFixed(1)),
  median_first_tick_ms: +median(firstTick).toFixed(1),
  // Not part of the target: WebSim and the embedded service do their start-up after the first tick.
  median_websim_ready_ms: webSimReady.length ? +median(webSimReady).toFixed(1) : null,
  median_bare_node_ms: +median(baseline).toFixed(1),
  median_first_tick_cpu_ms: +median(firstTickCpu).toFixed(1),
  median_bare_node_cpu_ms: +median(baselineCpu).toFixed(1),
  target: `first tick <= ${TARGET_MS} ms above bare node`,
};
const over = +(result.median_first_tick_ms - result.median_bare_node_ms).toFixed(1);
result.above_bare_node_ms = over;
console.log(JSON.stringify(result, null, 2));
const overCpu = +(result.median_first_tick_cpu_ms - result.median_bare_node_cpu_ms).toFixed(1);
result.above_bare_node_cpu_ms = overCpu;
const line = `startup: first tick ${result.median_first_tick_ms} ms after process start, +${over} ms over bare node ${result.median_bare_node_ms} ms; CPU to the first tick +${overCpu} ms over bare node's; WebSim listening at ${result.median_websim_ready_ms ?? '(never)'} ms (median of ${RUNS})`;
console.log(over <= TARGET_MS ? `${line}; within target` : `${line}; MISSED target: the first tick is ${over} ms above bare node (target ${TARGET_MS} ms)`);
await finish(0);
