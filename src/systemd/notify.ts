// The sd_notify protocol: readiness, status, stopping, reloading and watchdog messages to $NOTIFY_SOCKET; a no-op outside systemd.
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { describeError } from '../errors.js';

/**
 * The parts of `unix-dgram` used here. Node's `dgram` has no AF_UNIX sockets, and the protocol is
 * one datagram per message to a unix socket path, so a small native package does the sending.
 */
interface DgramSocket {
  send(buf: Buffer, offset: number, length: number, path: string, cb: (err?: Error) => void): void;
  on(event: 'error', listener: (err: Error) => void): unknown;
  close(): void;
}
interface UnixDgram {
  createSocket(type: 'unix_dgram'): DgramSocket;
}

/** How a notifier reaches systemd: a datagram socket, the `systemd-notify` program, or nothing. */
export type NotifyTransport = 'dgram' | 'systemd-notify' | 'none';

export interface NotifierOptions {
  /** Environment to read `NOTIFY_SOCKET` from; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Called once when a message cannot be delivered (the runtime logs it); sending never throws. */
  onError?: (message: string) => void;
  /** Force a transport (tests); default: `dgram` for a path socket, `systemd-notify` for an abstract one. */
  transport?: NotifyTransport;
}

/** One sd_notify message as key/value pairs, e.g. `{ READY: '1', STATUS: 'mode idle' }`. */
export type NotifyFields = Record<string, string | number>;

/**
 * Formats fields as the protocol wants them: `KEY=value` lines joined by newlines. Values may not
 * contain newlines (systemd would read the rest as a new key), so they are replaced by spaces.
 */
export function formatNotify(fields: NotifyFields): string {
  return Object.entries(fields)
    .map(([k, v]) => `${k}=${String(v).replace(/[\r\n]+/g, ' ')}`)
    .join('\n');
}

/** CLOCK_MONOTONIC in microseconds, as systemd wants it with RELOADING=1 (Node's hrtime is that clock on Linux). */
function monotonicUsec(): string {
  return (process.hrtime.bigint() / 1000n).toString();
}

let cachedDgram: UnixDgram | null | undefined;
/** Loads the native datagram package once; null when it is missing or failed to build. */
function loadUnixDgram(): UnixDgram | null {
  if (cachedDgram !== undefined) return cachedDgram;
  try {
    cachedDgram = createRequire(import.meta.url)('unix-dgram') as UnixDgram;
  } catch {
    cachedDgram = null;
  }
  return cachedDgram;
}

/**
 * Talks to the service manager. Outside systemd (`NOTIFY_SOCKET` unset or empty) every call does
 * nothing and resolves at once, so callers never branch on "are we a service". Sending never
 * throws: a lost readiness message is systemd's start timeout to report, not a crash of ours.
 *
 * Transports: for a filesystem socket (the normal `/run/systemd/notify`) one datagram is sent from
 * this process with unix-dgram, so `NotifyAccess=main` accepts it. For an abstract socket (`@...`,
 * which unix-dgram cannot address) or when the native package is unavailable, the message goes
 * through `systemd-notify`; systemd then sees a child process as sender, which needs
 * `NotifyAccess=all`, and this is reported once through `onError`.
 */
export class Notifier {
  readonly socketPath: string | undefined;
  readonly transport: NotifyTransport;
  private readonly onError: (message: string) => void;
  private warned = false;
  private closed = false;

  constructor(options: NotifierOptions = {}) {
    const env = options.env ?? process.env;
    const path = env.NOTIFY_SOCKET?.trim();
    this.socketPath = path ? path : undefined;
    this.onError = options.onError ?? (() => {});
    if (!this.socketPath) {
      this.transport = 'none';
      return;
    }
    const abstract = this.socketPath.startsWith('@');
    const wanted = options.transport ?? (abstract ? 'systemd-notify' : 'dgram');
    if (wanted === 'dgram' && !abstract) {
      const lib = loadUnixDgram();
      if (lib) {
        this.transport = 'dgram';
        return;
      }
      this.transport = 'systemd-notify';
      this.warnOnce('unix-dgram is not available; falling back to systemd-notify, which needs NotifyAccess=all in the unit');
      return;
    }
    this.transport = wanted === 'none' ? 'none' : 'systemd-notify';
    if (this.transport === 'systemd-notify') {
      this.warnOnce(`NOTIFY_SOCKET ${this.socketPath} is sent through systemd-notify, which needs NotifyAccess=all in the unit`);
    }
  }

  /** True when messages go somewhere (the process runs under systemd with Type=notify). */
  get enabled(): boolean {
    return this.transport !== 'none' && !this.closed;
  }

  /** Start-up finished: systemd marks the unit active. Optionally with a status line. */
  ready(status?: string): Promise<void> {
    return this.send(status === undefined ? { READY: 1 } : { READY: 1, STATUS: status });
  }

  /** A free-form status line shown by `systemctl status`. */
  status(text: string): Promise<void> {
    return this.send({ STATUS: text });
  }

  /** Stop has begun (on_shutdown hooks run next); systemd shows the unit as deactivating. */
  stopping(status?: string): Promise<void> {
    return this.send(status === undefined ? { STOPPING: 1 } : { STOPPING: 1, STATUS: status });
  }

  /** A reload (new configuration) has begun; send `ready()` again when it is done. */
  reloading(status?: string): Promise<void> {
    const fields: NotifyFields = { RELOADING: 1, MONOTONIC_USEC: monotonicUsec() };
    if (status !== undefined) fields.STATUS = status;
    return this.send(fields);
  }

  /** One watchdog keep-alive. The Watchdog class sends these from a timer on the event loop. */
  watchdog(): Promise<void> {
    return this.send({ WATCHDOG: 1 });
  }

  /** Asks systemd to act as if the watchdog expired now (the unit's watchdog restart policy applies). */
  watchdogTrigger(): Promise<void> {
    return this.send({ WATCHDOG: 'trigger' });
  }

  /** Extends the current start or stop timeout by `ms`, e.g. while long on_shutdown hooks run. */
  extendTimeout(ms: number): Promise<void> {
    return this.send({ EXTEND_TIMEOUT_USEC: Math.max(0, Math.round(ms * 1000)) });
  }

  /** Sends one message; resolves when handed to the kernel (or to systemd-notify), never rejects. */
  send(fields: NotifyFields | string): Promise<void> {
    if (!this.enabled || !this.socketPath) return Promise.resolve();
    const text = typeof fields === 'string' ? fields : formatNotify(fields);
    return this.transport === 'dgram' ? this.sendDgram(this.socketPath, text) : this.sendProgram(text);
  }

  /** Turns the notifier off; later calls are no-ops. It holds no resource between messages. */
  close(): void {
    this.closed = true;
  }

  /**
   * One socket per message, closed right after, as libsystemd's sd_notify does: an open
   * unix-dgram socket holds a libuv poll handle that would keep a finished process alive.
   */
  private sendDgram(path: string, text: string): Promise<void> {
    return new Promise((resolve) => {
      let socket: DgramSocket | undefined;
      const done = (err?: unknown): void => {
        if (err) this.warnOnce(`NOTIFY_SOCKET ${path}: ${describeError(err)}`);
        try {
          socket?.close();
        } catch {
          // already closed: nothing to release
        }
        resolve();
      };
      try {
        socket = loadUnixDgram()!.createSocket('unix_dgram');
        socket.on('error', (err) => this.warnOnce(`NOTIFY_SOCKET ${path}: ${describeError(err)}`));
        const buf = Buffer.from(text, 'utf8');
        socket.send(buf, 0, buf.length, path, (err) => done(err));
      } catch (err) {
        done(err);
      }
    });
  }

  private sendProgram(text: string): Promise<void> {
    // --pid names us as the sender; systemd still checks the real sender unless NotifyAccess=all.
    const args = [`--pid=${process.pid}`, ...text.split('\n')];
    return new Promise((resolve) => {
      const child = spawn('systemd-notify', args, { stdio: 'ignore', env: process.env });
      child.once('error', (err) => {
        this.warnOnce(`systemd-notify: ${describeError(err)}`);
        resolve();
      });
      child.once('exit', (code) => {
        if (code !== 0) this.warnOnce(`systemd-notify exited with ${code}`);
        resolve();
      });
    });
  }

  private warnOnce(message: string): void {
    if (this.warned) return;
    this.warned = true;
    this.onError(message);
  }
}
