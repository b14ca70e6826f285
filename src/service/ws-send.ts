// Bounded sending on the service's sockets: a client that does not read is closed (1008) before its queue can grow without limit.
import type { WebSocket } from 'ws';

/** Close code and reason for a client whose unsent queue passed the limit. */
export const SEND_QUEUE_CLOSE = { code: 1008, reason: 'send queue full: the client is not reading' } as const;
/** After the close frame is queued, a client that still does not read is cut off this much later. */
const TERMINATE_AFTER_MS = 1000;

/**
 * A send function for `ws`: JSON text frames, each only while the bytes already queued for the
 * client (ws.bufferedAmount: the socket's write buffer plus ws's own) stay within `limitBytes`.
 * Past it the socket stops being read, is closed with 1008 and, since a client that does not read
 * will not read the close frame either, terminated a second later; nothing more is queued.
 * Returns whether it sent.
 */
export function boundedSender(ws: WebSocket, limitBytes: number): (msg: Record<string, unknown>) => boolean {
  let full = false;
  return (msg) => {
    if (full || ws.readyState !== ws.OPEN) return false;
    const text = JSON.stringify(msg);
    if (ws.bufferedAmount + Buffer.byteLength(text) > limitBytes) {
      full = true;
      ws.pause();
      ws.close(SEND_QUEUE_CLOSE.code, SEND_QUEUE_CLOSE.reason);
      const timer = setTimeout(() => ws.terminate(), TERMINATE_AFTER_MS);
      ws.once('close', () => clearTimeout(timer));
      return false;
    }
    ws.send(text);
    return true;
  };
}
