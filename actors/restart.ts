// The restart of a failed plugin (an input without a session, a background) on src/backoff.ts's policy and breaker, as data for a machine's context.
import { connectionHealthy, connectionOpened, INITIAL_RECONNECT, planReconnect, reconnectOptions, type ReconnectState } from '../src/backoff.js';

/** How a plugin is restarted: the backoff's first delay and cap, and how long it must run to count as healthy (all ms). */
export interface RestartSettings {
  initialMs: number;
  maxMs: number;
  /** A plugin that ran this long (or produced something) was healthy: the next failure starts the count again. */
  healthyMs: number;
}

export const DEFAULT_RESTART: RestartSettings = { initialMs: 1000, maxMs: 30_000, healthyMs: 30_000 };

/** What a machine keeps of its restarts: plain data. */
export interface Restarts {
  /** The reconnect policy's state: attempts since the last healthy run, quick failures in a row, breaker probes. */
  policy: ReconnectState;
  /** Number of the run that comes next (1: the first, or the one after a healthy run). */
  attempt: number;
  /** The wait before the next run, planned at the last failure. */
  nextDelayMs: number;
  /** The breaker is open: runs kept failing before they were healthy, so the next one is a slower probe. */
  breaker: boolean;
}

export const INITIAL_RESTARTS: Restarts = { policy: INITIAL_RECONNECT, attempt: 1, nextDelayMs: 0, breaker: false };

/** What a supervised plugin's actor is named by and restarted with (an input's, a background's). */
export interface Supervised {
  id: string;
  type: string;
  mode: string;
  restart?: RestartSettings;
}

/** The context of a new supervised plugin's actor: its names, its restart settings when given, no restart yet, no error. */
export function supervisedContext(input: Supervised): Supervised & { restarts: Restarts; error: string | undefined } {
  return {
    id: input.id,
    type: input.type,
    mode: input.mode,
    ...(input.restart ? { restart: input.restart } : {}),
    restarts: INITIAL_RESTARTS,
    error: undefined,
  };
}

/** A run started (a fresh plugin listens or produces): until it is healthy, its failure is a quick one, which the breaker counts. */
export function runStarted(r: Restarts): Restarts {
  // The run's time is the machine's (its `healthy` delay on the actor system's clock), so the policy is
  // told only the verdict: every run opens at 0 and is healthy when runHealthy says so.
  return { ...r, policy: connectionOpened(r.policy, 0) };
}

/** The run proved healthy (it ran `healthyMs`, or produced a message): attempts and breaker start again. */
export function runHealthy(r: Restarts): Restarts {
  return r.policy.healthy ? r : { ...r, policy: connectionHealthy(r.policy), attempt: 1, breaker: false };
}

/** The run failed: the plan for the next one, on the policy's backoff and breaker with these settings. */
export function runFailed(r: Restarts, settings: RestartSettings = DEFAULT_RESTART): Restarts {
  const options = reconnectOptions({
    backoff: { initialMs: settings.initialMs, maxMs: settings.maxMs },
    // Health is the machine's verdict (runHealthy), never the policy's own clock.
    healthyAfterMs: Number.POSITIVE_INFINITY,
    // A healthy run that failed is replaced after the first delay, as a first failure would be.
    minCycleMs: settings.initialMs,
    breakerInitialMs: Math.min(settings.maxMs, settings.initialMs * 4),
    breakerMaxMs: settings.maxMs,
  });
  const plan = planReconnect(r.policy, 0, options);
  return { policy: plan.state, attempt: plan.attempt, nextDelayMs: plan.delayMs, breaker: plan.kind === 'breaker' };
}

/** How the next run waits, for a report line: "restarting in 2000 ms", with the breaker when it is open. */
export function restartText(r: Restarts): string {
  return `restarting in ${r.nextDelayMs} ms${r.breaker ? ` (runs in a row failed before they were healthy: breaker open, attempt ${r.attempt})` : ''}`;
}
