// Benchmark: runtime overhead of one tick (10 inputs, 5 actions, an instant model) over the bare model call, measured in the same run.
import { AgentBus } from '../dist/src/cortex/events.js';
import { tickRig } from './lib/tick-rig.js';

const N = Number(process.env.BENCH_N ?? 5000);
/** Issue 29's target for the runtime's own share of a tick. */
const TARGET_MS = 0.1;
const bus = new AgentBus();
bus.events$.subscribe(() => {}); // a reader, as --events or the view would be
const rig = await tickRig(bus);

/** Wall ms per call, and CPU ms per call (user+system of the process: on a loaded machine it leaves out the wait for a core). */
async function measure(fn) {
  for (let i = 0; i < 500; i++) await fn(); // warm-up
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let i = 0; i < N; i++) await fn();
  const cpu = process.cpuUsage(c0);
  return [(performance.now() - t0) / N, (cpu.user + cpu.system) / 1000 / N];
}

const [baselineMs, baselineCpuMs] = await measure(rig.ask);
const [tickMs, tickCpuMs] = await measure(rig.tick);
await rig.stop();
const overhead = tickMs - baselineMs;
console.log(
  JSON.stringify(
    {
      ticks: N,
      inputs: 10,
      actions: 5,
      baseline_model_call_ms: +baselineMs.toFixed(4),
      tick_ms: +tickMs.toFixed(4),
      overhead_ms: +overhead.toFixed(4),
      // The same in CPU time: comparable across runs on a shared machine, where wall time includes waiting for a core.
      overhead_cpu_ms: +(tickCpuMs - baselineCpuMs).toFixed(4),
    },
    null,
    2,
  ),
);
const line = `tick overhead: ${overhead.toFixed(3)} ms per tick, ${(tickCpuMs - baselineCpuMs).toFixed(3)} ms of CPU (10 inputs, 5 actions, 3 tool calls, instant model; bare call ${baselineMs.toFixed(4)} ms)`;
console.log(overhead <= TARGET_MS ? `${line}; within target` : `${line}; MISSED target: ${overhead.toFixed(3)} ms per tick (target ${TARGET_MS} ms)`);
