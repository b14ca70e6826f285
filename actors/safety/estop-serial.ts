// The hardware e-stop source: watches a serial line for the button's sentence (`ESTOP`) and, when configured, its release sentence.
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { fromCallback, type EventObject } from 'xstate';
import type { AgentBus } from '../../src/cortex/events.js';
import type { EstopSerialPolicy } from '../../src/safety/policy.js';
import { describeError } from '../../src/errors.js';
import { toStreamEvent } from '../streams/stream-event.js';

export interface EstopSerialInput {
  policy: EstopSerialPolicy | null;
  logger: Logger;
  bus: AgentBus;
}

/**
 * A child of the governor. The line is the process's shared one (devices/serial.ts), so the sentence
 * may come on the motor controller's own port, which the move connector writes to. The watcher holds
 * the port with a session of the one reconnect engine for as long as the agent runs (it is the
 * session's owner: a callback actor cannot have children, so the session is an actor this callback
 * starts and stops, actors/streams/serial-session.ts); after an unplug the session reopens it with
 * its backoff, and its states go on the bus as `stream` events of kind `serial`, input `safety`.
 * A line equal to `sentence` (surrounding blanks ignored) latches the e-stop; `release_sentence`,
 * when set, releases it. Nothing else is read. The serial modules are imported when the watcher
 * starts, so drawing the governor loads no device code.
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
  Promise.all([import('../../devices/serial.js'), import('../streams/serial-session.js')]).then(([{ sharedSerialLine }, { heldSerialLines }]) => {
    if (stopped) return;
    const line = sharedSerialLine({ binding: p.binding, path: p.path, baud_rate: p.baudRate }, { logger: input.logger });
    const onState = (e: Parameters<typeof toStreamEvent>[2]) => {
      const event = toStreamEvent('serial', 'safety', e);
      if (event) input.bus.emit(event);
    };
    sub = heldSerialLines(line, { onState }).subscribe({
      next: (text) => {
        const t = text.trim();
        if (t === p.sentence) sendBack({ type: 'safety.estop', source: 'serial', reason: `${p.sentence} on ${p.path}` });
        else if (p.releaseSentence !== null && t === p.releaseSentence) sendBack({ type: 'safety.release', source: 'serial' });
      },
      error: fail,
    });
  }, fail);
  return () => {
    stopped = true;
    sub?.unsubscribe();
    // The session stopped with the subscription (a stopped actor emits nothing more): say so on the bus.
    if (sub) input.bus.emit({ type: 'stream', at: Date.now(), kind: 'serial', input: 'safety', state: 'stopped' });
  };
});
