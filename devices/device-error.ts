// Typed errors of the device bindings, and the backoff schedule their restarts use.
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
