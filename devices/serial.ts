// Serial lines as a device a session actor opens (serialport or its mock binding), with each port's lines on a hot observable
// One open port is one link, held by every session on it.
import { statSync } from 'node:fs';
import { BehaviorSubject, Subject, type Observable } from 'rxjs';
import type { Logger } from 'pino';
import { SerialPort, SerialPortMock, ReadlineParser } from 'serialport';
import { DeviceError } from './device-error.js';
import { describeError } from '../src/errors.js';
import type { OpenableDevice } from './device-link.js';
import type { LinkEvent, StreamLink } from '../src/cloud/link.js';
import { SerialConfigSchema, type ParsedSerialConfig, type SerialConfig } from '../src/plugins/schemas/devices.js';

export { SerialConfigSchema, type SerialConfig } from '../src/plugins/schemas/devices.js';

type AnyPort = SerialPort | SerialPortMock;

/** The close code of a link whose port closed or failed (1006 with a reason: the engine says the reason as it is). */
const PORT_ENDED = 1006;

export interface SerialLine {
  readonly path: string;
  /**
   * The port as a device for a session actor (actors/streams/session-machine.ts): `connect`
   * opens it (or joins the port already open: a port is opened once however many sessions hold it),
   * the link's `close` is the port's close or error, closing the last link closes the port. It never
   * reopens by itself: the sessions do. Nothing here is fatal: a missing path may appear when the USB
   * adapter is plugged back in.
   */
  readonly device: OpenableDevice;
  /** Hot: the lines (without the delimiter) of whichever port is open, while a session holds it. Opens nothing. */
  lines(): Observable<string>;
  /** Hot: the raw bytes of whichever port is open, as they arrive (binary protocols: the lidar). Opens nothing. */
  bytes(): Observable<Buffer>;
  /** Sets the open port's modem lines (DTR, RTS); rejects with a DeviceError when it is not open. */
  set(flags: { dtr?: boolean; rts?: boolean }): Promise<void>;
  /** Writes to the open port; rejects with a DeviceError when it is not open. */
  write(data: string | Buffer): Promise<void>;
  /** The open port, if any (diagnostics and tests drive the mock binding through it). */
  port(): AnyPort | undefined;
  /**
   * Whether a port is open now (replayed to each subscriber), then each change: true once a session
   * opened it, false when it closed or ended. Waiting for the port is waiting on this. Completes when
   * the line is ended (`end()`).
   */
  readonly open$: Observable<boolean>;
  /**
   * Ends the line: closes the port if one is open (the sessions holding it hear the close) and
   * completes `open$`, `lines()` and `failures$`. Nothing opens it again. The process's shared lines
   * (sharedSerialLine) live as long as the process and are never ended.
   */
  end(): void;
  /** Each failure of the port, as the device saw it (a refused open, a close underneath): for logs and tests; the sessions say when it is reopened. */
  readonly failures$: Observable<DeviceError>;
}

function openPort(config: ParsedSerialConfig): Promise<AnyPort> {
  return new Promise((resolve, reject) => {
    const options = { path: config.path, baudRate: config.baud_rate, autoOpen: false };
    const port: AnyPort = config.binding === 'mock' ? new SerialPortMock(options) : new SerialPort(options);
    port.open((err) => (err ? reject(err) : resolve(port)));
  });
}

/** Why an open failed, in the binding's words without its repetitions ("Error: No such file or directory, cannot open PATH"). */
function openFailure(err: unknown, path: string): string {
  const text = describeError(err)
    .trim()
    .replace(/^Error: /, '');
  const trimmed = text.endsWith(`, cannot open ${path}`) ? text.slice(0, -`, cannot open ${path}`.length) : text;
  return trimmed || 'unknown error';
}

/**
 * How often an open port's path is checked. A device can vanish without a read error (a pty whose
 * peer died a moment after a write never reports the hang-up to serialport): a path that is gone, or
 * names another device node, ends the port within this.
 */
const PRESENCE_MS = 1000;

/** The device node `path` names now (links followed), or undefined when there is none. */
function nodeOf(path: string): string | undefined {
  try {
    const s = statSync(path);
    return `${s.dev}:${s.ino}:${s.rdev}`;
  } catch {
    return undefined;
  }
}

/** One open port and the links (sessions) holding it. */
interface Open {
  port: AnyPort;
  /** The presence check's timer (real ports only), cleared when the port ends. */
  presence: NodeJS.Timeout | undefined;
  holders: Set<(event: LinkEvent) => void>;
  links: number;
  end: LinkEvent | undefined;
}

export function createSerialLine(config: SerialConfig, ctx: { logger?: Logger } = {}): SerialLine {
  const parsed = SerialConfigSchema.parse(config);
  const failures = new Subject<DeviceError>();
  const heard = new Subject<string>();
  const raw = new Subject<Buffer>();
  let open: Open | undefined;
  let opening: Promise<Open> | undefined;
  let lineEnded = false;
  /** Whether `open` holds a port: the line's one record of it, said on `open$`. */
  const isOpen = new BehaviorSubject(false);
  const setOpen = (o: Open | undefined) => {
    open = o;
    if (!lineEnded && isOpen.value !== (o !== undefined)) isOpen.next(o !== undefined);
  };

  // The sessions holding the port say each outage (their state events, on the bus): the log keeps the detail.
  const fail = (error: DeviceError) => {
    failures.next(error);
    ctx.logger?.debug({ err: error }, error.message);
  };

  /** The port ended underneath (unplugged, the pty's peer went away): every link holding it hears the close. */
  const ended = (o: Open, error: DeviceError) => {
    if (o.end) return;
    clearInterval(o.presence);
    if (open === o) setOpen(undefined);
    fail(error);
    o.end = { type: 'close', code: PORT_ENDED, reason: error.message };
    for (const holder of [...o.holders]) holder(o.end);
    if (o.port.isOpen) o.port.close(() => undefined);
  };

  const start = async (): Promise<Open> => {
    let port: AnyPort;
    try {
      port = await openPort(parsed);
    } catch (err) {
      const error = new DeviceError('serial', `cannot open ${parsed.path}: ${openFailure(err, parsed.path)}`, { cause: err });
      fail(error);
      throw error;
    }
    if (lineEnded) {
      port.close(() => undefined);
      throw new DeviceError('serial', `${parsed.path}: the line was ended`);
    }
    const o: Open = { port, presence: undefined, holders: new Set(), links: 0, end: undefined };
    const node = parsed.binding === 'mock' ? undefined : nodeOf(parsed.path);
    if (node) {
      o.presence = setInterval(() => {
        if (nodeOf(parsed.path) !== node) ended(o, new DeviceError('serial', `${parsed.path} is gone (unplugged?)`, { code: 'serial_closed' }));
      }, PRESENCE_MS);
      o.presence.unref();
    }
    port.on('data', (chunk: Buffer) => {
      if (open === o && raw.observed) raw.next(chunk);
    });
    const parser = port.pipe(new ReadlineParser({ delimiter: parsed.delimiter, encoding: 'utf8' }));
    parser.on('data', (line: string) => {
      if (open === o) heard.next(line.endsWith('\r') ? line.slice(0, -1) : line);
    });
    port.on('error', (err) => ended(o, DeviceError.from('serial', err, parsed.path)));
    port.on('close', () => ended(o, new DeviceError('serial', `${parsed.path} closed (unplugged?)`, { code: 'serial_closed' })));
    setOpen(o);
    return o;
  };

  /** A session's hold on the open port: closing the last one closes the port. */
  const linkTo = (o: Open): StreamLink => {
    o.links += 1;
    let closed = false;
    return {
      bufferedAmount: () => 0,
      subscribe(listener) {
        o.holders.add(listener);
        // A close between the open and this subscription is not lost.
        const missed = o.end;
        if (missed) queueMicrotask(() => o.holders.has(listener) && listener(missed));
        return () => o.holders.delete(listener);
      },
      close() {
        if (closed) return;
        closed = true;
        o.links -= 1;
        if (o.links > 0 || o.end) return;
        o.end = { type: 'close', code: 1000, reason: 'closed' };
        clearInterval(o.presence);
        if (open === o) setOpen(undefined);
        if (o.port.isOpen) o.port.close(() => undefined);
      },
    };
  };

  const device: OpenableDevice = {
    connect: async (signal) => {
      if (lineEnded) throw new DeviceError('serial', `${parsed.path}: the line was ended`);
      if (open && !open.end) return linkTo(open);
      opening ??= start().finally(() => {
        opening = undefined;
      });
      const o = await opening;
      // Aborted while the port opened (the session stopped or timed out): hold it only to release it.
      const link = linkTo(o);
      if (signal.aborted) {
        link.close();
        throw new DeviceError('serial', `opening ${parsed.path} cancelled`);
      }
      return link;
    },
    // The lines reach consumers through `lines()` whichever session holds the port: nothing to wire per link.
    attach: () => () => undefined,
    backoff: { initialMs: parsed.reopen_initial_ms, maxMs: parsed.reopen_max_ms },
  };

  return {
    path: parsed.path,
    device,
    failures$: failures.asObservable(),
    port: () => open?.port,
    open$: isOpen.asObservable(),
    end: () => {
      if (lineEnded) return;
      const o = open;
      if (o) ended(o, new DeviceError('serial', `${parsed.path}: the line was ended`, { code: 'serial_closed' }));
      lineEnded = true;
      isOpen.complete();
      heard.complete();
      raw.complete();
      failures.complete();
    },
    lines: () => heard.asObservable(),
    bytes: () => raw.asObservable(),
    set: (flags) =>
      new Promise<void>((resolve, reject) => {
        const port = open?.port;
        if (!port?.isOpen) {
          reject(new DeviceError('serial', `${parsed.path} is not open`, { code: 'serial_closed' }));
          return;
        }
        port.set(flags, (err) => (err ? reject(DeviceError.from('serial', err, parsed.path)) : resolve()));
      }),
    write: (data) =>
      new Promise<void>((resolve, reject) => {
        const port = open?.port;
        if (!port?.isOpen) {
          reject(new DeviceError('serial', `${parsed.path} is not open`, { code: 'serial_closed' }));
          return;
        }
        port.write(data, (err) => (err ? reject(DeviceError.from('serial', err, parsed.path)) : port.drain(() => resolve())));
      }),
  };
}

/** Lines of this process, by binding and path: a port can be opened (locked) only once. */
const sharedLines = new Map<string, { line: SerialLine; baud: number }>();

/**
 * The process's one line on a port: the motor controller's connectors (move and face on the same
 * board), a serial battery board's input and the safety governor's e-stop watcher share one open
 * port, each holding it with a session of its own and each seeing every line; the port closes when
 * the last session lets go. The first caller's settings (baud rate) apply; a later caller asking for
 * another baud rate gets the same line and a warning.
 */
export function sharedSerialLine(config: SerialConfig, ctx: { logger?: Logger } = {}): SerialLine {
  const parsed = SerialConfigSchema.parse(config);
  const key = `${parsed.binding}:${parsed.path}`;
  let entry = sharedLines.get(key);
  if (!entry) {
    entry = { line: createSerialLine(config, ctx), baud: parsed.baud_rate };
    sharedLines.set(key, entry);
  } else if (entry.baud !== parsed.baud_rate) {
    ctx.logger?.warn(`${parsed.path} is already open at ${entry.baud} baud; ${parsed.baud_rate} is ignored`);
  }
  return entry.line;
}
