// The `serial` connector of move and face: one text line per command to a motor/face controller, answered OK or ERR.
import { filter, firstValueFrom, fromEvent, merge, mergeMap, throwError, timeout, type Subscription } from 'rxjs';
import { CortexError } from '../../../src/errors.js';
import type { ActionConnector, ActionContext, ConnectorFactory } from '../../../src/cortex/action.js';
import { SerialConnectorOptions } from '../../../src/plugins/schemas/actions.js';
import { sharedSerialLine, SerialConfigSchema, type SerialLine } from '../../../devices/serial.js';
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
type Action = 'move' | 'face';

/** The `serial` connector of `action` (its descriptor is in src/plugins/actions.ts). */
export function serialConnector(action: Action, verb: string, field: string, defaultStop: string): ConnectorFactory {
  return (config, ctx): ActionConnector => {
    const o = SerialConnectorOptions.parse(config ?? {});
    const line = sharedSerialLine(SerialConfigSchema.parse({ binding: o.binding, path: o.path, baud_rate: o.baud_rate }), { logger: ctx.logger });
    const writer = commandWriter(line, o.stop_line ?? defaultStop);
    const answers = controllerAnswers(line, action, o.path);
    return {
      name: 'serial',
      session: portSession(line, action, o.path, ctx),
      async run(value, signal) {
        const deadline = Date.now() + o.ack_timeout_seconds * 1000;
        await whenOpen(line, action, o.path, deadline, signal);
        const answer = answers.await(deadline, o.ack_timeout_seconds, signal, writer.stopNow);
        try {
          await writer.send(commandLine(verb, value, field));
          await answer.answered;
        } finally {
          answer.done();
        }
      },
      async stop() {
        answers.close();
      },
      halt: writer.stopNow,
    };
  };
}

/** Writes command lines; the stop line is not sent again while it is the last line sent. */
function commandWriter(line: SerialLine, stopLine: string) {
  /** The last line written. Set when the write starts. */
  let lastLine = '';
  /** The write of the last stop line: a halt while it is the last line sent waits for it instead of sending it again. */
  let stopWrite: Promise<void> = Promise.resolve();
  const send = (text: string) => {
    lastLine = text;
    return line.write(text);
  };
  return {
    send,
    /** Resolves once the stop line is out (written and drained), whoever asked for it first. */
    stopNow: (): Promise<void> => {
      if (!stopLine) return Promise.resolve();
      if (lastLine !== `${stopLine}\n`) stopWrite = send(`${stopLine}\n`);
      return stopWrite;
    },
  };
}

/**
 * The connector's hold on the port: a session the action actor runs as its child `device:serial`
 * (reopened with the engine's backoff after an unplug; its states on the bus as `stream` events of
 * kind `serial`). When the action stops, the action actor halts first and its session lets go of the
 * port once the halt's STOP is out (actors/actions/action.ts): nothing here orders that.
 */
function portSession(line: SerialLine, action: Action, path: string, ctx: ActionContext): SessionInput {
  const base = serialSessionInput(line);
  return {
    ...base,
    hooks: {
      ...base.hooks,
      state: (e) => {
        // The engine's "connect failed: " is a socket's word: the device's own error says what failed to open.
        if (e.state === 'backingOff')
          ctx.logger.warn(`${action}: ${(e.reason ?? path).replace(/^connect failed: /, '')}; the port is reopened in ${e.delay_ms ?? 0} ms`);
      },
    },
  };
}

/** The controller's answers, straight from the port's hot lines (never actor events): one command waits for one at a time. */
function controllerAnswers(line: SerialLine, action: Action, path: string) {
  let waiter: Waiter | undefined;
  let sub: Subscription | undefined = line.lines().subscribe({
    next: (text) => {
      const t = text.trim();
      if (!waiter) return;
      if (t === 'OK') waiter.resolve();
      else if (t.startsWith('ERR')) waiter.reject(new SerialCommandError(`${action} refused by the controller: ${t.slice(3).trim() || 'no reason given'}`));
    },
  });
  return {
    /**
     * The next answer: `answered` resolves on OK, rejects on ERR, at `deadline`, or with the signal's
     * reason (after asking for the stop line) when it aborts. `done()` ends the wait.
     */
    await(deadline: number, seconds: number, signal: AbortSignal, stopNow: () => Promise<void>) {
      let done = () => {};
      const answered = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new SerialCommandError(`${action}: no answer from the controller on ${path} within ${seconds} s`)),
          Math.max(0, deadline - Date.now()),
        );
        const onAbort = () => {
          stopNow().catch(() => undefined);
          reject(signal.reason);
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter = { resolve, reject };
        done = () => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          waiter = undefined;
        };
      });
      // Marked handled now: an abort or timeout may settle it while the write is still pending.
      answered.catch(() => undefined);
      return { answered, done: () => done() };
    },
    close(): void {
      sub?.unsubscribe();
      sub = undefined;
    },
  };
}

/**
 * Resolves when the port is open (its session opens it in the background and reopens it after an
 * unplug: the line says so on `open$`); rejects with a SerialCommandError at `deadline`, or with
 * the signal's reason when it aborts first.
 */
function whenOpen(line: SerialLine, action: Action, path: string, deadline: number, signal: AbortSignal): Promise<unknown> {
  signal.throwIfAborted();
  const aborted = fromEvent(signal, 'abort').pipe(mergeMap(() => throwError(() => signal.reason)));
  const notOpen = () => throwError(() => new SerialCommandError(`${action}: ${path} is not open`));
  return firstValueFrom(merge(line.open$.pipe(filter(Boolean)), aborted).pipe(timeout({ first: Math.max(0, deadline - Date.now()), with: notOpen })));
}

export const createMoveSerialConnector = serialConnector('move', 'MOVE', 'action', 'STOP');
export const createFaceSerialConnector = serialConnector('face', 'FACE', 'emotion', '');
