// Typed errors of the device bindings (the devices never reopen themselves: session actors do, actors/streams/session-machine.ts).
import { CortexError, describeError } from '../src/errors.js';

export type DeviceKind = 'microphone' | 'camera' | 'serial' | 'speaker' | 'lidar';

/** A device failed: a recorder exited, a camera would not open, a serial port vanished, a player failed. */
export class DeviceError extends CortexError {
  readonly device: DeviceKind;
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
