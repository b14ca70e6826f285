// Time and connection limits of the agent's small HTTP servers (WebSim, /metrics): header, body and idle timeouts, a connection cap per peer.
import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { whenPeerKnown } from './local-peer.js';

export interface HttpLimits {
  /** Time to receive a request's headers, in ms; then 408 and close. */
  headersTimeoutMs: number;
  /** Time to receive a whole request, body included, in ms; then 408 and close. */
  requestTimeoutMs: number;
  /** A connection with no traffic either way for this long is closed, in ms (HTTP; WebSocket has its own ping). */
  idleTimeoutMs: number;
  /** How long an idle keep-alive connection is kept between requests, in ms. */
  keepAliveTimeoutMs: number;
  /** Connections one peer (a remote address, or a local user: src/local-peer.ts) may hold at once; more are closed as they arrive. */
  maxConnectionsPerPeer: number;
  /** How often Node checks the header and request timeouts, in ms. */
  checkIntervalMs: number;
}

/** The defaults: generous for a page on a slow robot, short enough that a slow-body flood gives its sockets back. */
export const DEFAULT_HTTP_LIMITS: HttpLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  idleTimeoutMs: 60_000,
  keepAliveTimeoutMs: 5_000,
  maxConnectionsPerPeer: 32,
  checkIntervalMs: 1_000,
};

/** `limits` with any missing field from the defaults (tests shorten them). */
export function httpLimits(limits: Partial<HttpLimits> = {}): HttpLimits {
  return { ...DEFAULT_HTTP_LIMITS, ...limits };
}

/**
 * An HTTP server with these limits: Node's header and request timeouts (checked every
 * `checkIntervalMs`; a slow header or a trickled body gets 408 and the socket closes), an idle timeout,
 * a keep-alive timeout, and the per-peer connection cap of `capConnections`.
 */
export function limitedServer(handler: RequestListener<typeof IncomingMessage, typeof ServerResponse>, limits: HttpLimits): Server {
  const server = createServer(
    {
      headersTimeout: limits.headersTimeoutMs,
      requestTimeout: Math.max(limits.requestTimeoutMs, limits.headersTimeoutMs),
      keepAliveTimeout: limits.keepAliveTimeoutMs,
      connectionsCheckingInterval: limits.checkIntervalMs,
    },
    handler,
  );
  server.setTimeout(limits.idleTimeoutMs);
  capConnections(server, limits.maxConnectionsPerPeer);
  return server;
}

/** Where a capped server keeps its live connections per peer address (on the server: no module state). */
const PEERS = Symbol('cortexd.peers');
type Capped = Server & { [PEERS]?: Map<string, number> };

/**
 * Closes a new connection at once when its peer already holds `max`. The peer of a connection from
 * this machine is the local user that owns it (src/local-peer.ts), not 127.0.0.1: one user's flood
 * fills that user's places only, and the operator's and the robot's own connections keep theirs.
 */
export function capConnections(server: Server, max: number): void {
  const counts = new Map<string, number>();
  (server as Capped)[PEERS] = counts;
  server.on('connection', (socket: Socket) =>
    whenPeerKnown(socket, (peer) => {
      const n = counts.get(peer) ?? 0;
      if (n >= max) {
        socket.destroy();
        return;
      }
      counts.set(peer, n + 1);
      socket.once('close', () => {
        const left = (counts.get(peer) ?? 1) - 1;
        if (left > 0) counts.set(peer, left);
        else counts.delete(peer);
      });
    }),
  );
}

/** Connections each peer (`uid:N`, `local` or an address) holds on `server` now. */
export function connectionsByPeer(server: Server): Record<string, number> {
  return Object.fromEntries((server as Capped)[PEERS] ?? []);
}
