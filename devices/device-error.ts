// Typed errors of the device bindings, and the restart-with-backoff wrapper of the serial port (delays from src/backoff.ts; the microphone's recorder and the camera are reopened by session actors instead).
import { type Observable, type Subject, catchError, defer, retry, throwError, timer } from 'rxjs';
import type { Logger } from 'pino';
import { backoffDelay, type BackoffOptions, type RandomSource } from '../src/backoff.js';
import { CortexError, describeError } from '../src/errors.js';

export type DeviceKind = 'microphone' | 'camera' | 'serial' | 'speaker';

/** A device failed: a recorder exited, a camera would not open, a serial port vanished, a player failed. */
export class DeviceError extends CortexError {
  readonly device: DeviceKind;
  /** Set by `withRestarts` on a failure it recovers from: the wait before the next try, in ms. */
  retryInMs?: number;
  /** What the device program printed (ALSA's dump...): for `--verbose` and the log, never in the message. */
  readonly detail?: string;
  /** Reopening cannot cure it (no capture device, no recorder program): a session actor stops in `failed` on it. */
  readonly fatal?: true;
  constructor(device: DeviceKind, message: string, options?: { cause?: unknown; code?: string; detail?: string; fatal?: boolean }) {
    super(options?.code ?? `${device}_failed`, `${device}: ${message}`, options);
    this.name = 'DeviceError';
    this.device = device;
    if (options?.detail) this.detail = options.detail;
    if (options?.fatal) this.fatal = true;
  }

  /** Wraps anything thrown or emitted (libraries here emit strings) as a DeviceError. */
  static from(device: DeviceKind, err: unknown, context?: string): DeviceError {
    if (err instanceof DeviceError) return err;
    const text = describeError(err).trim();
    return new DeviceError(device, context ? `${context}: ${text}` : text, { cause: err });
  }
}

/**
 * Wraps a one-shot capture (`once` errors when the device fails) so failures restart it after
 * `backoffDelay(attempt)`; any emitted value resets the attempt counter. Each failure is reported on
 * `failures` and logged. After `maxRestarts` failures in a row the stream errors with a DeviceError.
 */
export function withRestarts<T>(
  device: DeviceKind,
  once: () => Observable<T>,
  options: BackoffOptions & { maxRestarts?: number; random?: RandomSource },
  failures: Subject<DeviceError>,
  logger?: Logger,
): Observable<T> {
  return defer(once).pipe(
    retry({
      count: options.maxRestarts ?? Infinity,
      resetOnSuccess: true,
      delay: (err: unknown, attempt: number) => {
        const error = DeviceError.from(device, err);
        const wait = backoffDelay(attempt, options, options.random);
        error.retryInMs = wait;
        failures.next(error);
        logger?.warn({ err: error, attempt, wait_ms: wait }, `${device} failed; restarting`);
        return timer(wait);
      },
    }),
    catchError((err: unknown) => throwError(() => DeviceError.from(device, err, 'gave up restarting'))),
  );
}
