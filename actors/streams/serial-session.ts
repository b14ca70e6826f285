// A serial port as a session actor (./session-machine.ts): its session input, with the serial timing
// Each owner runs it as its child `device:serial`: an input, a background, an action's connector, the safety governor.
import type { SerialLine } from '../../devices/serial.js';
import type { SessionInput, SessionTiming } from './session-machine.js';
import { deviceSessionInput } from './device-session.js';

/**
 * The serial port's session timing: the device's backoff (`reopen_initial_ms`..`reopen_max_ms`),
 * and a breaker that never waits longer than `reopen_max_ms` either. A port that is missing is not
 * fatal (a USB adapter can be plugged back in, a pty's peer can come back): it is probed for as long
 * as its owner runs, and once it is back it is found within `reopen_max_ms`.
 */
export function serialTiming(line: SerialLine, timing: Partial<SessionTiming> = {}): Partial<SessionTiming> {
  const { maxMs } = line.device.backoff;
  return { breakerInitialMs: Math.min(2000, maxMs), breakerMaxMs: maxMs, ...timing };
}

/** The session machine's input for `line` (its owner's child `device:serial`, events `serial.*`). */
export function serialSessionInput(line: SerialLine, timing: Partial<SessionTiming> = {}): SessionInput {
  return deviceSessionInput(line.device, 'serial', serialTiming(line, timing));
}
