// Benchmark: time from process start to the first tick of the default agent (embedded service included), against a bare node start.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
/** Issue 29's target: the first tick at most this many ms after what a bare node start takes (same run). */
const TARGET_MS = 300;
const main = join(import.meta.dirname, '..', 'dist', 'src', 'cli', 'main.js');

/** ms from spawn until `ready(line)` is true for a stdout line (or the process exits, for the baseline). */
function time(args, ready) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const env = { ...process.env, CORTEX_STATE_DIR: mkdtempSync(join(tmpdir(), 'cortexd-startup-')), CORTEX_LOG_LEVEL: 'warn', NOTIFY_SOCKET: '' };
    const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'ignore'] });
    let buf = '';
    let done = false;
    child.stdout.setEncoding('utf8').on('data', (c) => {
      buf += c;
      for (const line of buf.split('\n').slice(0, -1)) {
        if (!done && ready && ready(line)) {
          done = true;
          resolve(performance.now() - t0);
          child.kill('SIGKILL');
        }
      }
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
    });
    child.on('exit', () => (done ? undefined : ready ? reject(new Error('exited before the first tick')) : resolve(performance.now() - t0)));
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const baseline = [];
const firstTick = [];
for (let i = 0; i < RUNS; i++) {
  baseline.push(await time(['-e', '0']));
  firstTick.push(await time([main, 'run', 'default', '--events', '--for', '10s'], (l) => l.includes('"type":"tick"')));
}
const result = {
  runs: RUNS,
  bare_node_ms: baseline.map((x) => +x.toFixed(1)),
  first_tick_ms: firstTick.map((x) => +x.toFixed(1)),
  median_first_tick_ms: +median(firstTick).toFixed(1),
  median_bare_node_ms: +median(baseline).toFixed(1),
  target: `first tick <= ${TARGET_MS} ms above bare node`,
};
const over = +(result.median_first_tick_ms - result.median_bare_node_ms).toFixed(1);
result.above_bare_node_ms = over;
console.log(JSON.stringify(result, null, 2));
const line = `startup: first tick ${result.median_first_tick_ms} ms after process start, +${over} ms over bare node ${result.median_bare_node_ms} ms (median of ${RUNS})`;
console.log(over <= TARGET_MS ? `${line}; within target` : `${line}; MISSED target: the first tick is ${over} ms above bare node (target ${TARGET_MS} ms)`);
