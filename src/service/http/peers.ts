// Caps the TCP connections one peer (an address, or a local user) holds open on the service; more are answered 429 and closed at accept
// HTTP connections and upgraded sockets count together.
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { describePeer, whenPeerKnown } from '../../local-peer.js';

/** Decision: the body of the answer to a connection over the per-peer cap. */
export const tooManyConnections = (peer: string, limit: number): string =>
  `Too many connections from ${peer}: the limit is ${limit} open at once. Close some first.`;

/** A refused connection that does not close its end is cut off this much after the answer. */
const CUT_AFTER_MS = 1000;
/** Refused connections given their answer at once; past this many waiting to be cut off, a refusal is a plain close. */
const MAX_LINGERING = 64;

/**
 * Counts open connections per peer (src/local-peer.ts: a connection from this machine counts for the
 * local user that owns it, so one user's slow connections never take the robot's own places) from the moment they are accepted until they close.
 * A connection past `limit` gets `429 {"error": ...}` with `Connection: close` and is destroyed a
 * second later whatever it does, before any of its bytes are read; while 64 refused connections are
 * already waiting out that second, a further one is closed without an answer. So 3,000 slow
 * connections from one peer hold at most `limit` + 64 of the service's file descriptors. Returns
 * what it counts, for tests and metrics.
 */
export function capConnectionsPerPeer(server: Server, limit: number): { open(peer: string): number } {
  const open = new Map<string, number>();
  // Refused connections waiting out CUT_AFTER_MS: bounded too, so a flood of refusals holds no more descriptors than this.
  let lingering = 0;
  // First of the server's listeners: a refused connection is paused before the HTTP parser could read from it.
  server.prependListener('connection', (socket: Socket) => {
    let later = false;
    whenPeerKnown(socket, (peer) => {
      const n = open.get(peer) ?? 0;
      if (n >= limit) {
        // Known only after a read of the kernel's table: the connection may be mid-request, so it is cut, not answered.
        if (later) return void socket.destroy();
        socket.pause();
        socket.on('error', () => undefined);
        if (lingering >= MAX_LINGERING) return void socket.destroy();
        lingering++;
        socket.once('close', () => lingering--);
        const body = JSON.stringify({ error: tooManyConnections(describePeer(peer), limit) });
        socket.end(
          `HTTP/1.1 429 Too Many Requests\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nRetry-After: 1\r\nConnection: close\r\n\r\n${body}`,
        );
        setTimeout(() => socket.destroy(), CUT_AFTER_MS).unref();
        return;
      }
      open.set(peer, n + 1);
      socket.once('close', () => {
        const left = (open.get(peer) ?? 1) - 1;
        if (left > 0) open.set(peer, left);
        else open.delete(peer);
      });
    });
    later = true;
  });
  return { open: (peer) => open.get(peer) ?? 0 };
}
