// Time limits of the service's open sockets: a message must arrive whole soon after its first byte, and a socket that sends nothing is closed.
import type { Duplex } from 'node:stream';
import type { WebSocket } from 'ws';

/** After a close frame, a client that does not answer it is cut off this much later. */
const TERMINATE_AFTER_MS = 1000;

/** Decision: close code and reason of a socket whose message did not arrive whole in time. */
export const messageTimeoutReason = (ms: number): string => `message timeout: a message was not received whole within ${ms} ms`;
/** Decision: close code and reason of a socket on which the client sent nothing for too long. */
export const idleReason = (ms: number): string => `idle timeout: nothing received for ${ms} ms`;

export interface SocketTimeLimits {
  /** From a message's first byte to its last (limits.wsMessageTimeoutMs). */
  messageMs: number;
  /** Since the client's last message, ping or pong (limits.wsIdleTimeoutMs). */
  idleMs: number;
}

/**
 * Bounds how long `ws` (upgraded from `socket`) may hold the service without sending: bytes that
 * start a message (seen on the TCP socket) must become a whole message, ping or pong within
 * `messageMs`, or the socket is closed 1008 (a frame trickled a byte at a time held a socket for
 * 330 s); a client that sends nothing at all for `idleMs` is closed 1001. Either way, a client that
 * does not answer the close frame is terminated a second later. The timers end with the socket.
 */
export function limitSocketTime(ws: WebSocket, socket: Duplex, limits: SocketTimeLimits): void {
  let partial: NodeJS.Timeout | undefined;
  let idle: NodeJS.Timeout | undefined;
  let closing = false;

  const end = (code: number, reason: string): void => {
    if (closing) return;
    closing = true;
    stop();
    ws.close(code, reason);
    const cut = setTimeout(() => ws.terminate(), TERMINATE_AFTER_MS);
    cut.unref();
    ws.once('close', () => clearTimeout(cut));
  };
  const armIdle = (): void => {
    if (idle) clearTimeout(idle);
    idle = setTimeout(() => end(1001, idleReason(limits.idleMs)), limits.idleMs);
    idle.unref();
  };
  const onData = (): void => {
    if (partial || closing) return;
    partial = setTimeout(() => end(1008, messageTimeoutReason(limits.messageMs)), limits.messageMs);
    partial.unref();
  };
  // Whole messages and control frames arrive after the bytes that carried them ('data' comes first).
  const onWhole = (): void => {
    if (partial) clearTimeout(partial);
    partial = undefined;
    if (!closing) armIdle();
  };
  const stop = (): void => {
    if (partial) clearTimeout(partial);
    if (idle) clearTimeout(idle);
    partial = idle = undefined;
  };

  socket.on('data', onData);
  ws.on('message', onWhole);
  ws.on('ping', onWhole);
  ws.on('pong', onWhole);
  ws.once('close', () => {
    stop();
    socket.off('data', onData);
  });
  armIdle();
}
