// Proves the restart of a failed plugin (actors/restart.ts) on the one reconnect policy: backoff within its cap, a healthy run starting the count again, and the breaker after runs that failed before they were healthy.
import t from 'tap';
import { INITIAL_RESTARTS, restartText, runFailed, runHealthy, runStarted, type Restarts } from '../../actors/restart.js';

const settings = { initialMs: 1000, maxMs: 30_000, healthyMs: 30_000 };

/** Runs that start and fail before they were healthy, `n` times from `r`. */
function quickFailures(r: Restarts, n: number): Restarts[] {
  const out: Restarts[] = [];
  for (let i = 0; i < n; i++) out.push((r = runFailed(runStarted(r), settings)));
  return out;
}

t.test('runs that fail at once back off, within the cap, and open the breaker at the fifth', async (t) => {
  const plans = quickFailures(INITIAL_RESTARTS, 8);
  t.same(
    plans.map((p) => p.attempt),
    [2, 3, 4, 5, 6, 7, 8, 9],
    'each failure counts the next attempt',
  );
  for (const [i, p] of plans.entries()) t.ok(p.nextDelayMs >= 0 && p.nextDelayMs <= settings.maxMs, `delay ${i + 1} (${p.nextDelayMs} ms) within the cap`);
  t.ok(plans[0]!.nextDelayMs >= 500 && plans[0]!.nextDelayMs <= 1000, `the first wait is the first delay, jittered (${plans[0]!.nextDelayMs} ms)`);
  t.same(
    plans.map((p) => p.breaker),
    [false, false, false, false, true, true, true, true],
    'the breaker opens at the fifth quick failure in a row',
  );
  t.match(restartText(plans[4]!), /^restarting in \d+ ms \(runs in a row failed before they were healthy: breaker open, attempt 6\)$/);
  t.match(restartText(plans[0]!), /^restarting in \d+ ms$/);
});

t.test('a healthy run starts the count again and closes the breaker; its failure restarts after the first delay', async (t) => {
  const open = quickFailures(INITIAL_RESTARTS, 6).at(-1)!;
  t.ok(open.breaker);
  const healthy = runHealthy(runStarted(open));
  t.equal(healthy.attempt, 1);
  t.equal(healthy.breaker, false);
  t.equal(runHealthy(healthy), healthy, 'a second verdict of health changes nothing');
  const after = runFailed(healthy, settings);
  t.same([after.attempt, after.nextDelayMs, after.breaker], [1, settings.initialMs, false], 'a run that was healthy is replaced after the first delay');
  const next = quickFailures(after, 1)[0]!;
  t.same([next.attempt, next.breaker], [2, false], 'and the count of quick failures starts from nothing');
});
