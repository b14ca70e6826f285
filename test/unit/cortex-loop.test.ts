// The cortex loop keeps a fixed schedule under a simulated clock: no drift, late slots skipped and counted, final input wakes it at once.
import t from 'tap';
import { SimulatedClock } from 'xstate';
import { firstSlotFrom, slotTime, startCortexLoop, type TickReport, type TickRequest } from '../../actors/cortex/loop.js';

const flush = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

/** Advances the clock in `step` ms increments, letting promise callbacks run between steps. */
async function advance(clock: SimulatedClock, ms: number, step = 1) {
  for (let done = 0; done < ms; done += step) {
    clock.increment(step);
    await flush();
  }
}

/** A tick that takes `ms` of simulated time. */
const slowTick = (clock: SimulatedClock, ms: number) => (_req: TickRequest, signal: AbortSignal) =>
  new Promise<{ calledModel: boolean }>((resolve, reject) => {
    const id = clock.setTimeout(() => resolve({ calledModel: true }), ms);
    signal.addEventListener('abort', () => (clock.clearTimeout(id), reject(signal.reason)), { once: true });
  });

t.test('slot arithmetic is absolute: slot k is due at origin + k/hertz', async (t) => {
  t.equal(slotTime(1000, 3, 3), 2000);
  t.equal(firstSlotFrom(0, 10, 250), 3);
  t.equal(firstSlotFrom(0, 10, 300), 3, 'a slot due exactly now has not been missed');
  t.equal(firstSlotFrom(0, 3, 1000), 3, 'no float error at thirds');
});

t.test('ticks start on the schedule, not after the previous tick: 30 ms ticks at 10 Hz stay on 100 ms slots', async (t) => {
  const clock = new SimulatedClock();
  clock.set(5000);
  const reports: TickReport[] = [];
  const loop = startCortexLoop({ hertz: 10, clock, tick: slowTick(clock, 30), onTick: (r) => reports.push(r) });
  await advance(clock, 60_000, 10);
  loop.stop();
  t.ok(reports.length >= 599, `ran ${reports.length} ticks in 60 s`);
  t.same(
    reports.filter((r, k) => r.startedAt !== 5000 + k * 100),
    [],
    'every tick k started at exactly origin + k * 100 ms (a sleep-after-tick loop would start tick 599 at 77.9 s)',
  );
  t.equal(reports.at(-1)!.skipped, 0);
});

t.test('fractional periods (3 Hz) do not accumulate rounding drift', async (t) => {
  const clock = new SimulatedClock();
  const reports: TickReport[] = [];
  const loop = startCortexLoop({ hertz: 3, clock, tick: async () => ({ calledModel: false }), onTick: (r) => reports.push(r) });
  await advance(clock, 30_000, 1);
  loop.stop();
  t.equal(reports.length, 91, 'slots 0..90 in 30 s');
  for (const [k, r] of reports.entries()) {
    if (r.startedAt < (k * 1000) / 3 || r.startedAt >= (k * 1000) / 3 + 1) t.fail(`tick ${k} started at ${r.startedAt}`);
  }
  t.equal(reports.at(-1)!.startedAt, 30_000);
});

t.test('a tick never overlaps the next: a 250 ms tick at 10 Hz skips two slots each time, counted', async (t) => {
  const clock = new SimulatedClock();
  const reports: TickReport[] = [];
  let running = 0;
  let maxRunning = 0;
  const slow = slowTick(clock, 250);
  const loop = startCortexLoop({
    hertz: 10,
    clock,
    tick: async (req, signal) => {
      running++;
      maxRunning = Math.max(maxRunning, running);
      try {
        return await slow(req, signal);
      } finally {
        running--;
      }
    },
    onTick: (r) => reports.push(r),
  });
  await advance(clock, 1200, 5);
  loop.stop();
  t.equal(maxRunning, 1, 'never two ticks at once');
  t.same(
    reports.map((r) => r.slot),
    [0, 3, 6, 9],
    'slots 1, 2, 4, 5, 7, 8 were skipped',
  );
  t.same(
    reports.map((r) => r.skipped),
    [2, 4, 6, 8],
    'skips are counted',
  );
  t.same(
    reports.map((r) => r.latenessMs),
    [0, 0, 0, 0],
  );
});

t.test('a final input wakes the loop at once; a wake during a tick runs one right after it', async (t) => {
  const clock = new SimulatedClock();
  const reports: TickReport[] = [];
  const loop = startCortexLoop({ hertz: 0.1, clock, tick: slowTick(clock, 50), onTick: (r) => reports.push(r) });
  await advance(clock, 2000, 10);
  t.equal(reports.length, 1, 'only slot 0 so far at 0.1 Hz');
  loop.send({ type: 'loop.wake' });
  await advance(clock, 20, 10);
  loop.send({ type: 'loop.wake' });
  await advance(clock, 200, 10);
  t.same(
    reports.slice(1).map((r) => ({ wake: r.wake, startedAt: r.startedAt })),
    [
      { wake: true, startedAt: 2000 },
      { wake: true, startedAt: 2050 },
    ],
  );
  await advance(clock, 8000, 10);
  t.same(
    reports.slice(3).map((r) => ({ slot: r.slot, startedAt: r.startedAt })),
    [{ slot: 1, startedAt: 10_000 }],
    'the schedule is unchanged by wake ticks',
  );
  loop.stop();
});

t.test('stopping the loop aborts the running tick and cancels the timer', async (t) => {
  const clock = new SimulatedClock();
  let aborted = false;
  const reports: TickReport[] = [];
  const loop = startCortexLoop({
    hertz: 1,
    clock,
    tick: (_req, signal) =>
      new Promise((_resolve, reject) => signal.addEventListener('abort', () => ((aborted = true), reject(signal.reason)), { once: true })),
    onTick: (r) => reports.push(r),
  });
  await advance(clock, 100, 10);
  loop.stop();
  t.ok(aborted, 'the in-flight tick saw its signal abort');
  await advance(clock, 5000, 100);
  t.equal(reports.length, 0, 'no tick after stop');
});
