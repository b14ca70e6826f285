// WebSocket surface of the local service: upgrade routing, api_key checks with 401 JSON bodies, and the owners of every open session.
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { PATHS } from '../cloud/protocol.js';
import { startAsrSession } from './asr-session.js';
import { insufficientMessage, invalidKeyMessage, type ServiceContext } from './context.js';
import type { VerifiedKey } from './keys.js';
import { startVlmSession } from './vlm-session.js';
import { limitSocketTime } from './ws-limits.js';

/** Path of the second (`speechb`) recognition socket on the same server (the spec leaves it open). */
export const ASR_SECOND_PATH = '/asr';
/** Path of the vision socket on the same server. */
export const VLM_PATH = '/vlm';

export const MISSING_KEY_WS = 'Missing API key. Please connect with ?api_key=<API_KEY>';

type SocketKind = 'speechlab' | 'speechb' | 'vlm';

const ROUTES: Record<string, SocketKind> = {
  [PATHS.speechlabAsr]: 'speechlab',
  [PATHS.speechlabAsrV1]: 'speechlab',
  [ASR_SECOND_PATH]: 'speechb',
  [VLM_PATH]: 'vlm',
};

const REASONS: Record<number, string> = { 401: 'Unauthorized', 402: 'Payment Required', 404: 'Not Found', 429: 'Too Many Requests' };

/** Decision: the 429 body at the upgrade when a key already has its limit of sockets of that kind open. */
export const tooManySockets = (what: string, limit: number): string =>
  `Too many open ${what} sockets for this API key: the limit is ${limit}. Close one first.`;

/** Refuses an upgrade with an HTTP error and the spec's JSON body, then closes the TCP socket. */
function refuse(socket: Duplex, status: number, error: string): void {
  const body = JSON.stringify({ error });
  const retry = status === 429 ? 'Retry-After: 1\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status] ?? 'Error'}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retry}Connection: close\r\n\r\n${body}`,
  );
}

export interface SocketsHandle {
  /** Ends every session (close code 1001, going away) and stops accepting. */
  close(): Promise<void>;
}

/**
 * Attaches the sockets to `server`'s `upgrade` event. The key is read from the `api_key` query
 * parameter (the spec), or else from `Authorization: Bearer` / `x-api-key` headers (decision: for
 * clients that cannot put secrets in URLs). A key is checked at connect; a key deleted later ends
 * nothing already open, but every metering charge of the session still goes to it. A key may hold
 * limits.asrSessionsPerKey recognition sockets (both kinds together) and limits.vlmSessionsPerKey
 * vision sockets; one more is refused at the upgrade with 429 and a JSON body. An open socket must
 * send each message whole within limits.wsMessageTimeoutMs of its first byte (else 1008) and send
 * something at least every limits.wsIdleTimeoutMs (else 1001): ws-limits.ts.
 */
export function attachSockets(server: Server, ctx: ServiceContext): SocketsHandle {
  // One message per turn of the event loop (allowSynchronousEvents: false): a client flooding tiny
  // frames is served at the pace of everyone else instead of holding the loop for a whole read burst.
  const asrWss = new WebSocketServer({ noServer: true, maxPayload: ctx.limits.asrMessageBytes, allowSynchronousEvents: false });
  const vlmWss = new WebSocketServer({ noServer: true, maxPayload: ctx.limits.vlmMessageBytes, allowSynchronousEvents: false });
  const open = new Set<WebSocket>();

  const onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://localhost');
    const kind = ROUTES[url.pathname.replace(/\/+$/, '')];
    if (!kind) return refuse(socket, 404, `Not found: ${url.pathname}`);
    const header = (n: string): string | undefined => {
      const v = req.headers[n];
      return Array.isArray(v) ? v[0] : v;
    };
    const presented = url.searchParams.get('api_key') || /^Bearer\s+(\S+)$/i.exec(header('authorization') ?? '')?.[1] || header('x-api-key');
    if (!presented) return refuse(socket, 401, MISSING_KEY_WS);
    const check = ctx.keys.verify(presented);
    if (!check.ok) return refuse(socket, 401, invalidKeyMessage(check.details));
    if (ctx.accounts.freeMicro(check.key.userId) <= 0) return refuse(socket, 402, insufficientMessage(ctx, check.key.userId));
    const group = kind === 'vlm' ? 'vision' : 'recognition';
    const limit = kind === 'vlm' ? ctx.limits.vlmSessionsPerKey : ctx.limits.asrSessionsPerKey;
    const slot = `${group}:${check.key.keyId}`;
    const used = ctx.openSockets.get(slot) ?? 0;
    if (used >= limit) return refuse(socket, 429, tooManySockets(group, limit));
    // Counted from here, so upgrades in flight count too; released when the socket closes or the upgrade fails.
    ctx.openSockets.set(slot, used + 1);
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      const left = (ctx.openSockets.get(slot) ?? 1) - 1;
      if (left > 0) ctx.openSockets.set(slot, left);
      else ctx.openSockets.delete(slot);
    };
    socket.once('close', release);
    const wss = kind === 'vlm' ? vlmWss : asrWss;
    wss.handleUpgrade(req, socket, head, (ws) => {
      open.add(ws);
      limitSocketTime(ws, socket, { messageMs: ctx.limits.wsMessageTimeoutMs, idleMs: ctx.limits.wsIdleTimeoutMs });
      ws.once('close', () => {
        open.delete(ws);
        release();
      });
      startSession(kind, ws, check.key);
    });
  };

  const startSession = (kind: SocketKind, ws: WebSocket, key: VerifiedKey): void => {
    try {
      if (kind === 'vlm') startVlmSession(ws, key, ctx);
      else startAsrSession(ws, key, kind, ctx);
    } catch (err) {
      ctx.logger.error({ err, kind }, 'socket session failed to start');
      ws.close(1011, 'session failed to start');
    }
  };

  server.on('upgrade', onUpgrade);
  return {
    async close() {
      server.off('upgrade', onUpgrade);
      const closing = [...open].map(
        (ws) =>
          new Promise<void>((resolve) => {
            ws.once('close', () => resolve());
            ws.close(1001, 'service stopping');
            setTimeout(() => {
              ws.terminate();
              resolve();
            }, 1000).unref();
          }),
      );
      await Promise.all(closing);
      asrWss.close();
      vlmWss.close();
    },
  };
}
