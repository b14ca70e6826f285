// The one backoff and reconnect policy: capped exponential delays with jitter, an attempt count that resets on health, a quick-failure breaker.

/*
 * Everything that retries uses this module: the session machine (sockets, MQTT, MCP, and the devices:
 * recorder, camera, serial port), HTTP requests (cloud/retry.ts, where a server's Retry-After
 * overrides the delay).
 * Time and chance are injected (`now`, `random`), so tests drive them; nothing here sleeps.
 */

export interface BackoffOptions {
  /** Delay before the first retry, in ms. */
  initialMs: number;
  /** Cap of the exponential part, in ms: no delay is ever longer. */
  maxMs: number;
  /** Growth per attempt (default 2). */
  factor?: number;
  /**
   * Share of the delay that is random, 0..1 (default 0.5, "equal jitter"): the delay is uniform in
   * [d * (1 - jitter), d]. Robots restarted together then do not reconnect in lockstep, and the cap
   * stays a cap.
   */
  jitter?: number;
}

/** A source of uniform numbers in [0, 1]; Math.random by default. */
export type RandomSource = () => number;

/**
 * Delay before retry number `attempt` (1-based): d = min(maxMs, initialMs * factor^(attempt - 1)),
 * then jittered down by up to `jitter * d`. Never negative, never above maxMs.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: RandomSource = Math.random): number {
  const factor = options.factor ?? 2;
  const jitter = Math.min(1, Math.max(0, options.jitter ?? 0.5));
  const exponent = Math.max(0, Math.floor(attempt) - 1);
  const d = Math.min(options.maxMs, options.initialMs * factor ** exponent);
  const r = Math.min(1, Math.max(0, random()));
  return Math.max(0, Math.round(d * (1 - jitter + jitter * r)));
}

/** A failure counter with its delays: `fail()` after each failure, `reset()` after a success. */
export class Backoff {
  private failures = 0;

  constructor(
    private readonly options: BackoffOptions,
    private readonly random: RandomSource = Math.random,
  ) {}

  /** Failures in a row since the last reset. */
  get attempt(): number {
    return this.failures;
  }

  /** Counts one more failure and returns the delay before the next try. */
  fail(): number {
    this.failures += 1;
    return backoffDelay(this.failures, this.options, this.random);
  }

  reset(): void {
    this.failures = 0;
  }
}

/** How a long-lived connection (a socket session) is retried. All durations in ms. */
export interface ReconnectOptions {
  backoff: BackoffOptions;
  /** A connection open this long counts as healthy even if the server said nothing yet. */
  healthyAfterMs: number;
  /** Quick failures in a row (connections that closed before they were healthy) that open the breaker. */
  breakerThreshold: number;
  /** Wait before the first probe once the breaker is open; it doubles per failed probe up to breakerMaxMs. */
  breakerInitialMs: number;
  breakerMaxMs: number;
  /** A healthy connection that dropped is replaced at once, but never sooner than this after it opened. */
  minCycleMs: number;
  /** Failures in a row since the last healthy connection after which the policy gives up (kind `give-up`); unset: never. */
  giveUpAfter?: number;
}

export const DEFAULT_RECONNECT: ReconnectOptions = {
  backoff: { initialMs: 500, maxMs: 10_000 },
  healthyAfterMs: 1000,
  breakerThreshold: 5,
  breakerInitialMs: 2000,
  breakerMaxMs: 20_000,
  minCycleMs: 1000,
};

/** What the policy remembers between connections: plain data, so a state machine can keep it in its context. */
export interface ReconnectState {
  /** Number of the connection attempt in progress (or next), counted since the last healthy connection: 1 is the first. */
  attempt: number;
  /** Connections in a row that opened and closed before they were healthy. */
  quickFailures: number;
  /** Failed probes since the breaker opened; 0 while it is closed. */
  breakerTrips: number;
  /** When the current connection opened; undefined while none is open. */
  openedAt: number | undefined;
  /** The current connection got a server message. */
  healthy: boolean;
}

export const INITIAL_RECONNECT: ReconnectState = { attempt: 1, quickFailures: 0, breakerTrips: 0, openedAt: undefined, healthy: false };

/** Why the next connection waits as long as it does. */
export type ReconnectKind =
  /** The connection was healthy: replace it at once (attempt 1). */
  | 'reconnect'
  /** It failed before it was healthy: capped exponential backoff. */
  | 'backoff'
  /** Too many quick failures in a row: the breaker is open and the next connection is a probe. */
  | 'breaker'
  /** `giveUpAfter` failures in a row: no next attempt. */
  | 'give-up';

export interface ReconnectPlan {
  /** The state to keep until the next connection opens or fails. */
  state: ReconnectState;
  kind: ReconnectKind;
  /** Wait before the next attempt. */
  delayMs: number;
  /** Number of the attempt the wait leads to (1 after a healthy connection). */
  attempt: number;
  /** The connection that ended had opened but never became healthy. */
  quickFailure: boolean;
}

/** A connection opened at `now`. */
export function connectionOpened(state: ReconnectState, now: number): ReconnectState {
  return { ...state, openedAt: now, healthy: false };
}

/** The open connection proved healthy (a server message, or `healthyAfterMs` open): counters reset, breaker closes. */
export function connectionHealthy(state: ReconnectState): ReconnectState {
  return { attempt: 1, quickFailures: 0, breakerTrips: 0, openedAt: state.openedAt, healthy: true };
}

/** True when the open connection is healthy at `now` (told so, or open long enough). */
export function isHealthy(state: ReconnectState, now: number, options: Pick<ReconnectOptions, 'healthyAfterMs'>): boolean {
  return state.healthy || (state.openedAt !== undefined && now - state.openedAt >= options.healthyAfterMs);
}

/**
 * The connection attempt in progress failed, or the open connection closed, at `now`: how long to
 * wait and which attempt comes next.
 * - healthy connection: attempt 1 at once (`minCycleMs` after it opened at the earliest);
 * - otherwise attempt + 1 after backoffDelay(attempt); a connection that opened and died before it
 *   was healthy is a quick failure; `breakerThreshold` of them in a row open the breaker;
 * - `giveUpAfter` set and that many failures in a row already: `give-up`, no next attempt;
 * - breaker open: the wait is the breaker's (breakerInitialMs doubling per failed probe, capped at
 *   breakerMaxMs) or the backoff's, whichever is longer; it closes at the next healthy connection.
 */
export function planReconnect(state: ReconnectState, now: number, options: ReconnectOptions, random: RandomSource = Math.random): ReconnectPlan {
  if (isHealthy(state, now, options)) {
    const delayMs = state.openedAt === undefined ? 0 : Math.max(0, state.openedAt + options.minCycleMs - now);
    return { state: { ...INITIAL_RECONNECT }, kind: 'reconnect', delayMs, attempt: 1, quickFailure: false };
  }
  const quickFailure = state.openedAt !== undefined;
  const quickFailures = state.quickFailures + (quickFailure ? 1 : 0);
  if (options.giveUpAfter !== undefined && state.attempt > options.giveUpAfter)
    return { state: { ...state, quickFailures, openedAt: undefined }, kind: 'give-up', delayMs: 0, attempt: state.attempt, quickFailure };
  const attempt = state.attempt + 1;
  const backoffMs = backoffDelay(state.attempt, options.backoff, random);
  const breakerOpen = state.breakerTrips > 0 || quickFailures >= options.breakerThreshold;
  if (!breakerOpen) {
    return {
      state: { attempt, quickFailures, breakerTrips: 0, openedAt: undefined, healthy: false },
      kind: 'backoff',
      delayMs: backoffMs,
      attempt,
      quickFailure,
    };
  }
  const breakerTrips = state.breakerTrips + 1;
  const jitter = options.backoff.jitter !== undefined ? { jitter: options.backoff.jitter } : {};
  const probeMs = backoffDelay(breakerTrips, { initialMs: options.breakerInitialMs, maxMs: options.breakerMaxMs, ...jitter }, random);
  return {
    state: { attempt, quickFailures, breakerTrips, openedAt: undefined, healthy: false },
    kind: 'breaker',
    delayMs: Math.min(options.breakerMaxMs, Math.max(probeMs, backoffMs)),
    attempt,
    quickFailure,
  };
}

/** Merges partial reconnect options (a config or a test) over the defaults. */
export function reconnectOptions(partial: Partial<Omit<ReconnectOptions, 'backoff'>> & { backoff?: Partial<BackoffOptions> } = {}): ReconnectOptions {
  return { ...DEFAULT_RECONNECT, ...partial, backoff: { ...DEFAULT_RECONNECT.backoff, ...partial.backoff } };
}
