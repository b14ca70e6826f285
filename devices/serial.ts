// Serial lines: a line reader over serialport (or its mock binding) that reopens the port after an unplug.
import { Observable, Subject, share } from 'rxjs';
import type { Logger } from 'pino';
import { SerialPort, SerialPortMock, ReadlineParser } from 'serialport';
import { DeviceError, withRestarts } from './device-error.js';
import { SerialConfigSchema, type ParsedSerialConfig, type SerialConfig } from '../src/plugins/schemas/devices.js';

export { SerialConfigSchema, type SerialConfig } from '../src/plugins/schemas/devices.js';

type AnyPort = SerialPort | SerialPortMock;

export interface SerialLine {
  readonly path: string;
  /**
   * Cold: subscribing opens the port and emits its lines (without the delimiter). When the port closes
   * or fails (unplugged, the peer of a pty went away), it is reopened with backoff and reading
   * resumes; unsubscribing closes it.
   */
  lines(): Observable<string>;
  /** Writes to the open port; rejects with a DeviceError when it is not open. */
  write(data: string | Buffer): Promise<void>;
  /** The open port, if any (diagnostics and tests drive the mock binding through it). */
  port(): AnyPort | undefined;
  readonly failures$: Observable<DeviceError>;
}

function openPort(config: ParsedSerialConfig): Promise<AnyPort> {
  return new Promise((resolve, reject) => {
    const options = { path: config.path, baudRate: config.baud_rate, autoOpen: false };
    const port: AnyPort = config.binding === 'mock' ? new SerialPortMock(options) : new SerialPort(options);
    port.open((err) => (err ? reject(err) : resolve(port)));
  });
}

export function createSerialLine(config: SerialConfig, ctx: { logger?: Logger } = {}): SerialLine {
  const parsed = SerialConfigSchema.parse(config);
  const failures = new Subject<DeviceError>();
  let current: AnyPort | undefined;

  const openOnce = () =>
    new Observable<string>((subscriber) => {
      let closedByUs = false;
      let port: AnyPort | undefined;
      openPort(parsed).then(
        (opened) => {
          port = opened;
          if (closedByUs) {
            opened.close(() => {});
            return;
          }
          current = opened;
          const parser = opened.pipe(new ReadlineParser({ delimiter: parsed.delimiter, encoding: 'utf8' }));
          parser.on('data', (line: string) => subscriber.next(line.endsWith('\r') ? line.slice(0, -1) : line));
          opened.on('error', (err) => {
            if (!closedByUs) subscriber.error(DeviceError.from('serial', err, parsed.path));
          });
          opened.on('close', () => {
            if (current === opened) current = undefined;
            if (!closedByUs) subscriber.error(new DeviceError('serial', `${parsed.path} closed (unplugged?)`, { code: 'serial_closed' }));
          });
        },
        (err: unknown) => subscriber.error(DeviceError.from('serial', err, `cannot open ${parsed.path}`)),
      );
      return () => {
        closedByUs = true;
        if (port && current === port) current = undefined;
        if (port?.isOpen) port.close(() => {});
      };
    });

  return {
    path: parsed.path,
    failures$: failures.asObservable(),
    port: () => current,
    lines: () => withRestarts('serial', openOnce, { initialMs: parsed.reopen_initial_ms, maxMs: parsed.reopen_max_ms }, failures, ctx.logger),
    write: (data) =>
      new Promise<void>((resolve, reject) => {
        const port = current;
        if (!port?.isOpen) {
          reject(new DeviceError('serial', `${parsed.path} is not open`, { code: 'serial_closed' }));
          return;
        }
        port.write(data, (err) => (err ? reject(DeviceError.from('serial', err, parsed.path)) : port.drain(() => resolve())));
      }),
  };
}

/** Lines open in this process, by binding and path: a port can be opened (locked) only once. */
const sharedLines = new Map<string, { line: SerialLine; lines$: Observable<string>; baud: number }>();

/**
 * The process's one line on a port: the motor controller's connectors (move and face on the same
 * board) and the safety governor's e-stop watcher share one open port, each subscriber seeing every
 * line; the port closes when the last subscriber leaves. The first caller's settings (baud rate)
 * apply; a later caller asking for another baud rate gets the same line and a warning.
 */
export function sharedSerialLine(config: SerialConfig, ctx: { logger?: Logger } = {}): SerialLine {
  const parsed = SerialConfigSchema.parse(config);
  const key = `${parsed.binding}:${parsed.path}`;
  let entry = sharedLines.get(key);
  if (!entry) {
    const line = createSerialLine(config, ctx);
    entry = { line, lines$: line.lines().pipe(share()), baud: parsed.baud_rate };
    sharedLines.set(key, entry);
  } else if (entry.baud !== parsed.baud_rate) {
    ctx.logger?.warn(`${parsed.path} is already open at ${entry.baud} baud; ${parsed.baud_rate} is ignored`);
  }
  const { line, lines$ } = entry;
  return { path: line.path, failures$: line.failures$, port: () => line.port(), write: (data) => line.write(data), lines: () => lines$ };
}
