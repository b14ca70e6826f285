// Benchmark: runtime overhead of one tick (10 inputs, 5 actions, an instant model) over the bare model call, measured in the same run.
import { AgentBus } from '../dist/src/cortex/events.js';
import { finish, quick, verdict } from './lib/bench.js';
import { tickRig } from './lib/tick-rig.js';

const N = Number(process.env.BENCH_N ?? (quick ? 300 : 5000));
/**
 * Ticks run before measuring. A tick is a few hundred distinct functions (XState's interpreter, the
 * fuser, the action machine): the first ~2500 ticks cost 4-5 times a settled one while V8 optimises
 * them (0.32 ms of CPU each over the first 2500, then 0.06-0.08), so a short warm-up measures the
 * compiler, not the runtime an agent ticks with for hours.
 */
const WARMUP = Number(process.env.BENCH_WARMUP ?? (quick ? 300 : 5000));
/** Issue 29's target for the runtime's own share of a tick. */
const TARGET_MS = 0.1;
const bus = new AgentBus();
bus.events$.subscribe(() => {}); // a reader, as --events or the view would be
const rig = await tickRig(bus);

/** Wall ms per call, and CPU ms per call (user+system of the process: on a loaded machine it leaves out the wait for a core). */
async function measure(fn) {
  for (let i = 0; i < WARMUP; i++) await fn();
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
const overheadCpu = tickCpuMs - baselineCpuMs;
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
      overhead_cpu_ms: +overheadCpu.toFixed(4),
    },
    null,
    2,
  ),
);
// The verdict is on CPU time: the tick is single-threaded and does no I/O, so on a quiet machine wall
// and CPU agree; on a shared one the wall time also counts the wait for a core, which is not the runtime's.
const line = `tick overhead: ${overheadCpu.toFixed(3)} ms of CPU per tick, ${overhead.toFixed(3)} ms wall (10 inputs, 5 actions, 3 tool calls, instant model; bare call ${baselineMs.toFixed(4)} ms)`;
verdict(line, overheadCpu <= TARGET_MS ? [] : [`${overheadCpu.toFixed(3)} ms of CPU per tick (target ${TARGET_MS} ms)`]);
await finish(0);
