// Benchmark: period error and drift of the cortex loop (fixed schedule) at 10 and 100 Hz against a sleep-after-tick loop, run side by side.
import { startCortexLoop } from '../dist/actors/cortex/loop.js';
import { finish, option, verdict } from './lib/bench.js';

const SECONDS = option('seconds', 60, 1);
const TARGET_MS_PER_MIN = 1;
const WORK_MS = 2; // every tick does this much synchronous work, as a real tick would

const busy = (ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

/** Least-squares slope of lateness over time, in ms of lateness per minute. */
function slopePerMinute(points) {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.t, 0) / n;
  const my = points.reduce((s, p) => s + p.late, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.t - mx) * (p.late - my);
    den += (p.t - mx) ** 2;
  }
  return (num / den) * 60_000;
}

/** `starts[i]` ran in slot `slots[i]` (the baseline has no slots: tick k is meant for slot k). */
function summarise(starts, periodMs, origin, slots = starts.map((_, k) => k)) {
  const errors = starts.slice(1).map((s, i) => Math.abs(s - starts[i] - (slots[i + 1] - slots[i]) * periodMs));
  const points = starts.map((s, i) => ({ t: s - origin, late: s - (origin + slots[i] * periodMs) }));
  const last = points.at(-1);
  return {
    ticks: starts.length,
    mean_period_error_ms: +(errors.reduce((a, b) => a + b, 0) / errors.length).toFixed(3),
    max_period_error_ms: +Math.max(...errors).toFixed(3),
    drift_ms_per_min: +slopePerMinute(points).toFixed(3),
    final_offset_ms: +last.late.toFixed(3),
  };
}

/** The baseline: sleep one period after each tick ends (what a naive loop does). */
function sleepAfterTick(hertz, ms) {
  return new Promise((resolve) => {
    const periodMs = 1000 / hertz;
    const starts = [];
    const origin = performance.now();
    const step = () => {
      starts.push(performance.now());
      busy(WORK_MS);
      if (performance.now() - origin >= ms) return resolve(summarise(starts, periodMs, origin));
      setTimeout(step, periodMs);
    };
    step();
  });
}

function fixedSchedule(hertz, ms) {
  return new Promise((resolve) => {
    const periodMs = 1000 / hertz;
    const starts = [];
    const slots = [];
    let skipped = 0;
    const clock = { now: () => performance.now(), setTimeout: (f, d) => setTimeout(f, d), clearTimeout: (id) => clearTimeout(id) };
    const origin = performance.now();
    const loop = startCortexLoop({
      hertz,
      clock,
      tick: async (req) => {
        starts.push(performance.now());
        slots.push(req.slot);
        skipped = req.skipped;
        busy(WORK_MS);
        return { calledModel: false };
      },
    });
    setTimeout(() => {
      loop.stop();
      resolve({ ...summarise(starts, periodMs, origin, slots), skipped });
    }, ms);
  });
}

const results = {};
for (const hertz of [10, 100]) {
  // One after the other, so neither loop's work delays the other's timers.
  const cortex = await fixedSchedule(hertz, SECONDS * 1000);
  const baseline = await sleepAfterTick(hertz, SECONDS * 1000);
  results[`${hertz}hz`] = { cortex, sleep_after_tick: baseline };
}
console.log(JSON.stringify({ seconds: SECONDS, work_ms_per_tick: WORK_MS, results }, null, 2));
const r10 = results['10hz'];
const r100 = results['100hz'];
verdict(
  `loop drift over ${SECONDS}s: 10 Hz ${r10.cortex.drift_ms_per_min} ms/min (sleep-after-tick ${r10.sleep_after_tick.drift_ms_per_min}), ` +
    `100 Hz ${r100.cortex.drift_ms_per_min} ms/min (sleep-after-tick ${r100.sleep_after_tick.drift_ms_per_min}); ` +
    `mean period error 10 Hz ${r10.cortex.mean_period_error_ms} ms, 100 Hz ${r100.cortex.mean_period_error_ms} ms`,
  [r10, r100]
    .map((r, i) => [[10, 100][i], r.cortex.drift_ms_per_min])
    .filter(([, drift]) => !(Math.abs(drift) < TARGET_MS_PER_MIN))
    .map(([hz, drift]) => `${hz} Hz drift ${drift} ms/min (target under ${TARGET_MS_PER_MIN})`),
);
await finish(0);
