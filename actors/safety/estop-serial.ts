// The hardware e-stop source: watches a serial line for the button's sentence (`ESTOP`) and, when configured, its release sentence.
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { fromCallback, type EventObject } from 'xstate';
import type { AgentBus } from '../../src/cortex/events.js';
import type { EstopSerialPolicy } from '../../src/safety/policy.js';
import { describeError } from '../../src/errors.js';
import type { SessionInput } from '../streams/session-machine.js';

export interface EstopSerialInput {
  policy: EstopSerialPolicy | null;
  logger: Logger;
  bus: AgentBus;
}

/** Sent to the governor once the watcher has the line: spawn its session, `input`, as the child `device:serial`. */
export interface HoldSerialSession {
  type: 'safety.serial.hold';
  input: SessionInput;
}

/**
 * A child of the governor. The line is the process's shared one (devices/serial.ts), so the sentence
 * may come on the motor controller's own port, which the move connector writes to. The port is held
 * by a session actor (actors/streams/serial-session.ts) that the governor runs as its child
 * `device:serial` for as long as the agent runs (this callback builds its input and sends it up,
 * `safety.serial.hold`: the serial modules are imported here, when the watcher starts, so drawing the
 * governor loads no device code). After an unplug the session reopens the port with its backoff; its
 * states go on the bus as `stream` events of kind `serial`, input `safety`. The watcher reads the
 * port's hot lines directly (never relayed through actor events): a line equal to `sentence`
 * (surrounding blanks ignored) latches the e-stop; `release_sentence`, when set, releases it. Nothing
 * else is read.
 */
export const estopSerialLogic = fromCallback<EventObject, EstopSerialInput>(({ input, sendBack }) => {
  const p = input.policy;
  if (!p) return;
  let sub: Subscription | undefined;
  let stopped = false;
  const fail = (err: unknown) => {
    const message = `e-stop serial line ${p.path}: ${describeError(err)}`;
    input.logger.error(message);
    input.bus.emit({ type: 'error', at: Date.now(), source: 'safety', message });
  };
  Promise.all([import('../../devices/serial.js'), import('../streams/serial-session.js'), import('../streams/device-session.js')]).then(
    ([{ sharedSerialLine }, { serialSessionInput }, { withStatesOnBus }]) => {
      if (stopped) return;
      const line = sharedSerialLine({ binding: p.binding, path: p.path, baud_rate: p.baudRate }, { logger: input.logger });
      // Subscribed before the session opens the port: no line of the first open is missed.
      sub = line.lines().subscribe((text) => {
        const t = text.trim();
        if (t === p.sentence) sendBack({ type: 'safety.estop', source: 'serial', reason: `${p.sentence} on ${p.path}` });
        else if (p.releaseSentence !== null && t === p.releaseSentence) sendBack({ type: 'safety.release', source: 'serial' });
      });
      sendBack({ type: 'safety.serial.hold', input: withStatesOnBus(serialSessionInput(line), input.bus, 'safety') } satisfies HoldSerialSession);
    },
    fail,
  );
  return () => {
    stopped = true;
    sub?.unsubscribe();
    // The session stops with the governor (a stopped actor emits nothing more): say so on the bus.
    if (sub) input.bus.emit({ type: 'stream', at: Date.now(), kind: 'serial', input: 'safety', state: 'stopped' });
  };
});
