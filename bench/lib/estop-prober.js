// The e-stop socket prober of the flood benches: STATUS round trips measured from a worker thread, one at a time, with the coordinated-omission correction.
import { Worker } from 'node:worker_threads';

/*
 * The e-stop prober runs in a worker thread: the operator's side keeps this thread's event loop
 * busy, which would otherwise show up as the agent's latency. It sends STATUS on a fresh connection
 * every `everyMs`, one at a time, the way `cortexd estop` does; a probe that takes longer than the
 * interval also stands for the probes it held up (latency minus each interval it covered: the
 * coordinated-omission correction), so a stall shows in as many samples as it lasted, not in one.
 */
const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
const { connect } = require('node:net');
const out = [];
const errors = {};
let running = true;
function probe() {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const s = connect(workerData.path);
    const timer = setTimeout(() => (s.destroy(), resolve(performance.now() - t0)), 30000);
    s.on('connect', () => s.write('STATUS\\n'));
    s.on('data', () => (clearTimeout(timer), s.destroy(), resolve(performance.now() - t0)));
    s.on('error', (e) => (clearTimeout(timer), (errors[e.code] = (errors[e.code] || 0) + 1), resolve(performance.now() - t0)));
  });
}
const done = (async () => {
  while (running) {
    const ms = await probe();
    out.push(ms);
    for (let held = ms - workerData.everyMs; held > 0; held -= workerData.everyMs) out.push(held);
    await new Promise((r) => setTimeout(r, Math.max(0, workerData.everyMs - ms)));
  }
})();
parentPort.on('message', async () => {
  running = false;
  await done;
  parentPort.postMessage({ out, errors });
});
`;

/** Starts probing `path` every `everyMs`; `stop()` resolves with the latencies (ms). */
export function prober(path, everyMs) {
  const w = new Worker(PROBER, { eval: true, workerData: { path, everyMs } });
  return {
    stop: () =>
      new Promise((resolve) => {
        w.once('message', ({ out, errors }) => {
          void w.terminate();
          if (Object.keys(errors).length) console.error('e-stop probe errors', errors);
          resolve(out);
        });
        w.postMessage('stop');
      }),
  };
}
