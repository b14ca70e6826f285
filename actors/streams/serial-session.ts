// A serial port as a session of the one reconnect engine: its session input (the serial timing), and its lines held open by a session for owners that are not an input (connectors, the e-stop watcher).
import { Observable } from 'rxjs';
import type { SerialLine } from '../../devices/serial.js';
import type { SessionInput, SessionStateEvent, SessionTiming } from './session-machine.js';
import { deviceSessionInput, startDeviceSession } from './device-session.js';

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

/** The session machine's input for `line` (the input actor's child `device:serial`, events `serial.*`). */
export function serialSessionInput(line: SerialLine, timing: Partial<SessionTiming> = {}): SessionInput {
  return deviceSessionInput(line.device, 'serial', serialTiming(line, timing));
}

/**
 * Cold: subscribing starts a session on the port (its own actor, owned by this subscription: the
 * owners that use it, a connector and the e-stop watcher, are no input actor that could hold it as
 * a child) and emits the port's lines; unsubscribing stops the session, which lets go of the port.
 * `onState` hears each of its `serial.state` events (the watcher puts them on the bus). The session
 * never fails for good (nothing about a port is fatal), so the lines never error.
 */
export function heldSerialLines(
  line: SerialLine,
  options: { timing?: Partial<SessionTiming>; onState?: (event: SessionStateEvent) => void } = {},
): Observable<string> {
  return new Observable<string>((subscriber) => {
    const sub = line.lines().subscribe(subscriber);
    const session = startDeviceSession(line.device, 'serial', {
      timing: serialTiming(line, options.timing),
      ...(options.onState ? { onEvent: (e) => e.type === 'serial.state' && options.onState!(e as unknown as SessionStateEvent) } : {}),
    });
    return () => {
      sub.unsubscribe();
      session.stop();
    };
  });
}
