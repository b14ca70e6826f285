// Proves the one backoff module: capped exponential delays with jitter, resets on health, reconnect at once after a healthy drop, a breaker for quick failures only.
import t from 'tap';
import {
  Backoff,
  INITIAL_RECONNECT,
  backoffDelay,
  connectionHealthy,
  connectionOpened,
  isHealthy,
  planReconnect,
  reconnectOptions,
  type ReconnectState,
} from '../../src/backoff.js';

const top = () => 1;
const bottom = () => 0;

t.test('delays double from the initial value up to the cap; jitter only shortens them', async (t) => {
  const o = { initialMs: 100, maxMs: 1000 };
  t.same(
    [1, 2, 3, 4, 5, 6, 20].map((n) => backoffDelay(n, o, top)),
    [100, 200, 400, 800, 1000, 1000, 1000],
  );
  t.same(
    [1, 4, 7].map((n) => backoffDelay(n, o, bottom)),
    [50, 400, 500],
    'equal jitter keeps at least half',
  );
  t.same(
    [1, 4].map((n) => backoffDelay(n, { ...o, jitter: 0 }, bottom)),
    [100, 800],
    'no jitter',
  );
  t.equal(backoffDelay(3, { ...o, factor: 3, jitter: 0 }), 900);
  for (let i = 0; i < 1000; i++) {
    const d = backoffDelay(1 + (i % 12), o);
    if (d < 0 || d > 1000) t.fail(`out of range: ${d}`);
  }
  t.equal(
    backoffDelay(1, o, () => 7),
    100,
    'a broken random source cannot push past the cap',
  );
});

t.test('Backoff counts failures and resets', async (t) => {
  const b = new Backoff({ initialMs: 10, maxMs: 100, jitter: 0 });
  t.same([b.fail(), b.fail(), b.fail()], [10, 20, 40]);
  t.equal(b.attempt, 3);
  b.reset();
  t.equal(b.attempt, 0);
  t.equal(b.fail(), 10, 'after a success the next failure starts over');
});

const opts = reconnectOptions({
  backoff: { initialMs: 100, maxMs: 1000, jitter: 0 },
  healthyAfterMs: 1000,
  breakerThreshold: 3,
  breakerInitialMs: 500,
  breakerMaxMs: 4000,
  minCycleMs: 200,
});

/** Opens a connection at `at` and lets it close at `closeAt` (healthy by a message when `message`). */
function session(s: ReconnectState, at: number, closeAt: number, message = false) {
  let state = connectionOpened(s, at);
  if (message) state = connectionHealthy(state);
  return planReconnect(state, closeAt, opts, top);
}

t.test('a healthy connection that drops reconnects at once as attempt 1, however many failures came before', async (t) => {
  let s: ReconnectState = { ...INITIAL_RECONNECT };
  for (let i = 0; i < 2; i++) s = planReconnect(s, 0, opts, top).state; // two connect failures
  t.equal(s.attempt, 3);
  const byMessage = session(s, 10_000, 10_300, true);
  t.match(byMessage, { kind: 'reconnect', delayMs: 0, attempt: 1, quickFailure: false }, 'healthy by its first server message');
  const byAge = session(s, 10_000, 11_500);
  t.match(byAge, { kind: 'reconnect', delayMs: 0, attempt: 1 }, 'healthy by staying open');
  t.ok(isHealthy(connectionOpened(s, 0), 1000, opts));
  t.notOk(isHealthy(connectionOpened(s, 0), 999, opts));
  t.match(session(s, 10_000, 10_050, true), { kind: 'reconnect', delayMs: 150 }, 'never more often than once per minCycleMs');
});

t.test('a drop every 1.5 s never grows the delay', async (t) => {
  let s: ReconnectState = { ...INITIAL_RECONNECT };
  const delays: number[] = [];
  for (let i = 0; i < 50; i++) {
    const plan = session(s, i * 1500, i * 1500 + 1500);
    delays.push(plan.delayMs);
    s = plan.state;
  }
  t.ok(
    delays.every((d) => d === 0),
    'all at once',
  );
  t.equal(s.attempt, 1);
});

t.test('connect failures back off exponentially to the cap and never trip the breaker', async (t) => {
  let s: ReconnectState = { ...INITIAL_RECONNECT };
  const plans = [];
  for (let i = 0; i < 8; i++) {
    const plan = planReconnect(s, i, opts, top);
    plans.push(plan);
    s = plan.state;
  }
  t.same(
    plans.map((p) => p.delayMs),
    [100, 200, 400, 800, 1000, 1000, 1000, 1000],
  );
  t.same(
    plans.map((p) => p.attempt),
    [2, 3, 4, 5, 6, 7, 8, 9],
  );
  t.ok(plans.every((p) => p.kind === 'backoff' && !p.quickFailure));
});

t.test('quick failures open the breaker, whose probes wait a few growing seconds; a healthy connection closes it', async (t) => {
  let s: ReconnectState = { ...INITIAL_RECONNECT };
  const plans = [];
  for (let i = 0; i < 7; i++) {
    const plan = session(s, i * 10_000, i * 10_000 + 50); // dies 50 ms after opening, before any message
    plans.push(plan);
    s = plan.state;
  }
  t.same(
    plans.map((p) => p.kind),
    ['backoff', 'backoff', 'breaker', 'breaker', 'breaker', 'breaker', 'breaker'],
  );
  t.same(
    plans.map((p) => p.delayMs),
    [100, 200, 500, 1000, 2000, 4000, 4000],
    'breaker waits grow to their cap (4 s here), never a minute',
  );
  t.ok(plans.every((p) => p.quickFailure));
  const healed = session(s, 100_000, 100_300, true);
  t.match(healed, { kind: 'reconnect', delayMs: 0, attempt: 1 });
  t.same(healed.state, INITIAL_RECONNECT, 'breaker closed, counters reset');
  const after = session(healed.state, 200_000, 200_010);
  t.match(after, { kind: 'backoff', delayMs: 100 }, 'a later quick failure starts from the bottom again');
});

t.test('while the breaker is open the wait is at least the backoff', async (t) => {
  const o = reconnectOptions({ backoff: { initialMs: 1000, maxMs: 8000, jitter: 0 }, breakerThreshold: 1, breakerInitialMs: 100, breakerMaxMs: 5000 });
  let s: ReconnectState = { ...INITIAL_RECONNECT, attempt: 4 };
  const plan = planReconnect(connectionOpened(s, 0), 10, o, top);
  t.match(plan, { kind: 'breaker', delayMs: 5000 }, 'backoff 8 s, capped by the breaker cap');
  s = plan.state;
  t.equal(s.breakerTrips, 1);
});

t.test('giveUpAfter: that many failures in a row, then give-up; a healthy connection starts the count again', async (t) => {
  const o = { ...opts, giveUpAfter: 2 };
  let s: ReconnectState = { ...INITIAL_RECONNECT };
  const kinds: string[] = [];
  for (let i = 0; i < 3; i++) {
    const plan = planReconnect(connectionOpened(s, i * 10), i * 10 + 5, o, top);
    kinds.push(plan.kind);
    s = plan.state;
  }
  t.same(kinds, ['backoff', 'backoff', 'give-up'], 'the third failure in a row gives up');
  let h: ReconnectState = { ...INITIAL_RECONNECT };
  h = planReconnect(connectionOpened(h, 0), 5, o, top).state;
  h = planReconnect(connectionOpened(h, 10), 15, o, top).state;
  h = connectionHealthy(connectionOpened(h, 20));
  t.equal(planReconnect(h, 30, o, top).kind, 'reconnect', 'a healthy connection that ended is replaced');
  t.equal(planReconnect(connectionOpened({ ...INITIAL_RECONNECT }, 0), 5, { ...opts }, top).kind, 'backoff', 'unset: never gives up');
});
