// Typed errors of the device bindings, and the backoff restart policy they share.
import { type Observable, type Subject, catchError, defer, retry, throwError, timer } from 'rxjs';
import type { Logger } from 'pino';
import { CortexError, describeError } from '../src/errors.js';

export type DeviceKind = 'microphone' | 'camera' | 'serial' | 'speaker';

/** A device failed: a recorder exited, a camera would not open, a serial port vanished, a player failed. */
export class DeviceError extends CortexError {
  readonly device: DeviceKind;
  constructor(device: DeviceKind, message: string, options?: { cause?: unknown; code?: string }) {
    super(options?.code ?? `${device}_failed`, `${device}: ${message}`, options);
    this.name = 'DeviceError';
    this.device = device;
  }

  /** Wraps anything thrown or emitted (libraries here emit strings) as a DeviceError. */
  static from(device: DeviceKind, err: unknown, context?: string): DeviceError {
    if (err instanceof DeviceError) return err;
    const text = describeError(err).trim();
    return new DeviceError(device, context ? `${context}: ${text}` : text, { cause: err });
  }
}

export interface BackoffOptions {
  /** First delay (ms). */
  initialMs: number;
  /** Cap (ms). */
  maxMs: number;
  /** Growth per attempt (default 2). */
  factor?: number;
  /** Fraction of the delay randomised, 0..1 (default 0.2: delay * (1 +/- 0.2)). */
  jitter?: number;
}

/**
 * Delay before retry number `attempt` (1-based): initial * factor^(attempt-1), capped, then jittered
 * by +/- jitter so many robots restarted together do not reconnect in lockstep. Never exceeds
 * maxMs * (1 + jitter), never negative.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  const factor = options.factor ?? 2;
  const jitter = options.jitter ?? 0.2;
  const base = Math.min(options.maxMs, options.initialMs * factor ** Math.max(0, attempt - 1));
  return Math.max(0, Math.round(base * (1 + jitter * (2 * random() - 1))));
}

/**
 * Wraps a one-shot capture (`once` errors when the device fails) so failures restart it after
 * `backoffDelay(attempt)`; any emitted value resets the attempt counter. Each failure is reported on
 * `failures` and logged. After `maxRestarts` failures in a row the stream errors with a DeviceError.
 */
export function withRestarts<T>(
  device: DeviceKind,
  once: () => Observable<T>,
  options: BackoffOptions & { maxRestarts?: number },
  failures: Subject<DeviceError>,
  logger?: Logger,
): Observable<T> {
  return defer(once).pipe(
    retry({
      count: options.maxRestarts ?? Infinity,
      resetOnSuccess: true,
      delay: (err: unknown, attempt: number) => {
        const error = DeviceError.from(device, err);
        failures.next(error);
        const wait = backoffDelay(attempt, options);
        logger?.warn({ err: error, attempt, wait_ms: wait }, `${device} failed; restarting`);
        return timer(wait);
      },
    }),
    catchError((err: unknown) => throwError(() => DeviceError.from(device, err, 'gave up restarting'))),
  );
}
