// Limits of one WebSim page socket: a ping it must answer, a frame that must finish arriving, and a bound on what waits to be sent to it.
import { WebSocket } from 'ws';

export interface SocketLimits {
  /** Longest message the page may send, in bytes (ws closes the socket with 1009 past it). */
  maxMessageBytes: number;
  /** A page socket is pinged this often, in ms; one that has not answered the previous ping is closed. */
  pingIntervalMs: number;
  /** A frame (or fragmented message) still arriving after this long, in ms, is a trickle: the socket is closed. */
  frameTimeoutMs: number;
  /** Bytes that may wait unsent to one page; past this the page is too slow to follow and is dropped. */
  maxBufferedBytes: number;
  /** How often the frame timeout is checked, in ms. */
  checkIntervalMs: number;
}

export const DEFAULT_SOCKET_LIMITS: SocketLimits = {
  maxMessageBytes: 16 * 1024,
  pingIntervalMs: 15_000,
  frameTimeoutMs: 10_000,
  maxBufferedBytes: 1024 * 1024,
  checkIntervalMs: 1_000,
};

/** What ws's receiver holds between frames (ws 8: its `_receiver`); a missing field turns the frame check off, never on. */
interface ReceiverState {
  _state?: number;
  _bufferedBytes?: number;
  _fragmented?: number;
}

/** True while part of a frame, or of a fragmented message, has arrived and the rest has not. */
function midMessage(ws: WebSocket): boolean {
  const r = (ws as unknown as { _receiver?: ReceiverState })._receiver;
  if (!r || typeof r._state !== 'number') return false;
  return r._state !== 0 || (r._bufferedBytes ?? 0) > 0 || (r._fragmented ?? 0) !== 0;
}

/** Why a guard closed a socket (counted by the server, reported on close). */
export type DropReason = 'no pong' | 'trickled frame' | 'slow reader' | 'audio flood' | 'bad audio';

/**
 * Watches one socket until it closes: pings it every `pingIntervalMs` and terminates it if the previous
 * ping went unanswered (a page that stopped reading also stops answering); terminates it when a frame
 * has been arriving for `frameTimeoutMs` with no message completed meanwhile. `send` drops the socket
 * instead of queueing past `maxBufferedBytes`. `onDrop` hears each termination.
 */
export class SocketGuard {
  private alive = true;
  private completed = 0;
  private partialSince: { at: number; completed: number } | undefined;
  private readonly pinger: NodeJS.Timeout;
  private readonly checker: NodeJS.Timeout;

  constructor(
    private readonly ws: WebSocket,
    private readonly limits: SocketLimits,
    private readonly onDrop: (why: DropReason) => void,
  ) {
    ws.on('pong', () => {
      this.alive = true;
      this.completed += 1;
    });
    ws.on('ping', () => (this.completed += 1));
    ws.on('message', () => (this.completed += 1));
    this.pinger = setInterval(() => this.ping(), limits.pingIntervalMs);
    this.checker = setInterval(() => this.checkFrame(), limits.checkIntervalMs);
    this.pinger.unref();
    this.checker.unref();
    ws.once('close', () => this.dispose());
  }

  /** Sends `text` unless the page already has too much waiting; then drops the page. Returns whether it was sent. */
  send(text: string): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    if (this.ws.bufferedAmount + Buffer.byteLength(text) > this.limits.maxBufferedBytes) {
      this.drop('slow reader');
      return false;
    }
    this.ws.send(text);
    return true;
  }

  /**
   * Sends `text` if it fits beside what already waits for the page; otherwise skips it (returns false)
   * and keeps the page: for what a page can do without (a sentence of speech), where `send` drops it.
   */
  offer(text: string): boolean {
    if (this.ws.readyState !== WebSocket.OPEN) return false;
    if (this.ws.bufferedAmount + Buffer.byteLength(text) > this.limits.maxBufferedBytes) return false;
    this.ws.send(text);
    return true;
  }

  /** Closes the socket for something the page sent (an audio flood): counted like the guard's own drops. */
  cut(why: DropReason, code: number, text: string): void {
    this.dispose();
    this.onDrop(why);
    this.ws.close(code, text);
  }

  private ping(): void {
    if (!this.alive) return this.drop('no pong');
    this.alive = false;
    if (this.ws.readyState === WebSocket.OPEN) this.ws.ping();
  }

  private checkFrame(): void {
    if (!midMessage(this.ws)) {
      this.partialSince = undefined;
      return;
    }
    const now = Date.now();
    if (!this.partialSince || this.partialSince.completed !== this.completed) {
      this.partialSince = { at: now, completed: this.completed };
      return;
    }
    if (now - this.partialSince.at >= this.limits.frameTimeoutMs) this.drop('trickled frame');
  }

  private drop(why: DropReason): void {
    this.dispose();
    this.onDrop(why);
    this.ws.terminate();
  }

  dispose(): void {
    clearInterval(this.pinger);
    clearInterval(this.checker);
  }
}
