// The `serial` connector of move and face: one text line per command to a motor/face controller, answered OK or ERR.
import { filter, firstValueFrom, fromEvent, merge, mergeMap, throwError, timeout, type Subscription } from 'rxjs';
import { CortexError } from '../../../src/errors.js';
import type { ActionConnector, ConnectorFactory } from '../../../src/cortex/action.js';
import { SerialConnectorOptions } from '../../../src/plugins/schemas/actions.js';
import { sharedSerialLine, SerialConfigSchema } from '../../../devices/serial.js';
import { serialSessionInput } from '../../streams/serial-session.js';
import type { SessionInput } from '../../streams/session-machine.js';

/*
 * Line protocol (docs/actions.md, "Serial line protocol"). ASCII lines ending in `\n`:
 *   host -> controller   `MOVE <action>`   e.g. `MOVE turn left`   (move)
 *                        `FACE <emotion>`  e.g. `FACE joy`         (face)
 *                        `STOP`            sent when a running command is interrupted, and when the safety
 *                                          governor halts motion (no answer awaited; not repeated while
 *                                          it was the last line sent)
 *   controller -> host   `OK`              the command was carried out (or accepted, for long moves)
 *                        `ERR <text>`      it was refused; <text> becomes the action's error
 * One command is in flight per port; the next is sent after the answer. No answer within
 * `ack_timeout_seconds` fails the command. Other lines from the controller (telemetry, banners) are
 * ignored (the safety governor may read an e-stop sentence such as `ESTOP` on the same line: the port
 * is shared, devices/serial.ts). A trailing `\r` is accepted. Values never contain a newline (they come
 * from fixed enums).
 */

export { SerialConnectorOptions };

/** A command refused (`ERR`) or unanswered by the controller. */
export class SerialCommandError extends CortexError {
  constructor(message: string) {
    super('serial_command', message);
    this.name = 'SerialCommandError';
  }
}

/** The line for one command: `<VERB> <word>`, whitespace squeezed so the value cannot break the framing. */
export function commandLine(verb: string, value: unknown, field: string): string {
  const raw = (value as Record<string, unknown>)[field];
  return `${verb} ${String(raw).replace(/\s+/g, ' ').trim()}\n`;
}

type Waiter = { resolve: () => void; reject: (err: Error) => void };

/** The `serial` connector of `action` (its descriptor is in src/plugins/actions.ts). */
export function serialConnector(action: 'move' | 'face', verb: string, field: string, defaultStop: string): ConnectorFactory {
  return (config, ctx): ActionConnector => {
    const o = SerialConnectorOptions.parse(config ?? {});
    const stopLine = o.stop_line ?? defaultStop;
    const line = sharedSerialLine(SerialConfigSchema.parse({ binding: o.binding, path: o.path, baud_rate: o.baud_rate }), { logger: ctx.logger });
    let waiter: Waiter | undefined;
    /** The last line written: a stop right after a stop is not sent again. Set when the write starts. */
    let lastLine = '';
    /** The write of the last stop line: a halt while it is the last line sent waits for it instead of sending it again. */
    let stopWrite: Promise<void> = Promise.resolve();
    const send = (text: string) => {
      lastLine = text;
      return line.write(text);
    };
    /** Resolves once the stop line is out (written and drained), whoever asked for it first. */
    const stopNow = (): Promise<void> => {
      if (!stopLine) return Promise.resolve();
      if (lastLine !== `${stopLine}\n`) stopWrite = send(`${stopLine}\n`);
      return stopWrite;
    };
    // The connector's hold on the port is a session the action actor runs as its child `device:serial`
    // (reopened with the engine's backoff after an unplug; its states on the bus as `stream` events of
    // kind `serial`). When the action stops, the action actor halts first and its session lets go of the
    // port once the halt's STOP is out (actors/actions/action.ts): nothing here orders that.
    const base = serialSessionInput(line);
    const session: SessionInput = {
      ...base,
      hooks: {
        ...base.hooks,
        state: (e) => {
          // The engine's "connect failed: " is a socket's word: the device's own error says what failed to open.
          if (e.state === 'backingOff')
            ctx.logger.warn(`${action}: ${(e.reason ?? o.path).replace(/^connect failed: /, '')}; the port is reopened in ${e.delay_ms ?? 0} ms`);
        },
      },
    };
    // The controller's answers come straight from the port's hot lines (never actor events).
    let sub: Subscription | undefined = line.lines().subscribe({
      next: (text) => {
        const t = text.trim();
        if (!waiter) return;
        if (t === 'OK') waiter.resolve();
        else if (t.startsWith('ERR')) waiter.reject(new SerialCommandError(`${action} refused by the controller: ${t.slice(3).trim() || 'no reason given'}`));
      },
    });

    /**
     * Resolves when the port is open (its session opens it in the background and reopens it after an
     * unplug: the line says so on `open$`); rejects with a SerialCommandError at `deadline`, or with
     * the signal's reason when it aborts first.
     */
    const whenOpen = (deadline: number, signal: AbortSignal): Promise<unknown> => {
      signal.throwIfAborted();
      const aborted = fromEvent(signal, 'abort').pipe(mergeMap(() => throwError(() => signal.reason)));
      const notOpen = () => throwError(() => new SerialCommandError(`${action}: ${o.path} is not open`));
      return firstValueFrom(merge(line.open$.pipe(filter(Boolean)), aborted).pipe(timeout({ first: Math.max(0, deadline - Date.now()), with: notOpen })));
    };

    return {
      name: 'serial',
      session,
      async run(value, signal) {
        const deadline = Date.now() + o.ack_timeout_seconds * 1000;
        await whenOpen(deadline, signal);
        let cleanup = () => {};
        const answered = new Promise<void>((resolve, reject) => {
          const timer = setTimeout(
            () => reject(new SerialCommandError(`${action}: no answer from the controller on ${o.path} within ${o.ack_timeout_seconds} s`)),
            Math.max(0, deadline - Date.now()),
          );
          const onAbort = () => {
            stopNow().catch(() => undefined);
            reject(signal.reason);
          };
          signal.addEventListener('abort', onAbort, { once: true });
          waiter = { resolve, reject };
          cleanup = () => {
            clearTimeout(timer);
            signal.removeEventListener('abort', onAbort);
            waiter = undefined;
          };
        });
        // Marked handled now: an abort or timeout may settle it while the write is still pending.
        answered.catch(() => undefined);
        try {
          await send(commandLine(verb, value, field));
          await answered;
        } finally {
          cleanup();
        }
      },
      async stop() {
        sub?.unsubscribe();
        sub = undefined;
      },
      halt: stopNow,
    };
  };
}

export const createMoveSerialConnector = serialConnector('move', 'MOVE', 'action', 'STOP');
export const createFaceSerialConnector = serialConnector('face', 'FACE', 'emotion', '');
