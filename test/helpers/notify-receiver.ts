// Test peer for sd_notify: a unix datagram socket bound in a temp dir that records every message with its arrival time.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface RecvSocket {
  bind(path: string): void;
  on(event: 'message', listener: (buf: Buffer) => void): unknown;
  on(event: 'error', listener: (err: Error) => void): unknown;
  close(): void;
}

export interface Received {
  text: string;
  /** performance.now() when the datagram was read. */
  at: number;
}

/**
 * Binds a fresh socket; `path` goes into NOTIFY_SOCKET. `next(pred)` resolves with the first
 * message (already received or future) matching `pred` after index `from`, or rejects after
 * `timeoutMs`, so tests wait for events instead of sleeping.
 */
export class NotifyReceiver {
  readonly dir = mkdtempSync(join(tmpdir(), 'cortexd-notify-'));
  readonly path = join(this.dir, 'notify.sock');
  readonly messages: Received[] = [];
  private readonly socket: RecvSocket;
  private waiters: Array<() => void> = [];

  constructor() {
    const lib = createRequire(import.meta.url)('unix-dgram') as { createSocket(t: 'unix_dgram'): RecvSocket };
    this.socket = lib.createSocket('unix_dgram');
    this.socket.on('message', (buf) => {
      this.messages.push({ text: buf.toString('utf8'), at: performance.now() });
      const w = this.waiters;
      this.waiters = [];
      for (const f of w) f();
    });
    this.socket.bind(this.path);
  }

  next(pred: (text: string) => boolean, timeoutMs = 5000, from = 0): Promise<Received & { index: number }> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        reject(new Error(`no matching notify message within ${timeoutMs} ms; got ${JSON.stringify(this.messages.map((m) => m.text))}`));
      }, timeoutMs);
      const look = (): void => {
        for (let i = from; i < this.messages.length; i++) {
          const m = this.messages[i]!;
          if (pred(m.text)) {
            clearTimeout(timer);
            resolve({ ...m, index: i });
            return;
          }
        }
        this.waiters.push(look);
      };
      look();
    });
  }

  close(): void {
    try {
      this.socket.close();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
