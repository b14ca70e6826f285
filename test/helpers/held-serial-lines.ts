// Tests: a serial port's lines held open by a session of its own (a root actor), for tests that drive a line without an owner actor.
import { Observable } from 'rxjs';
import type { SerialLine } from '../../devices/serial.js';
import type { SessionStateEvent, SessionTiming } from '../../actors/streams/session-machine.js';
import { startDeviceSession } from '../../actors/streams/device-session.js';
import { serialTiming } from '../../actors/streams/serial-session.js';

/**
 * Cold: subscribing starts a session on the port (a root actor: in the agent the session is its
 * owner's child `device:serial`) and emits the port's lines; unsubscribing stops the session, which
 * lets go of the port. `onState` hears each of its `serial.state` events. The session never fails for
 * good (nothing about a port is fatal), so the lines never error.
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
