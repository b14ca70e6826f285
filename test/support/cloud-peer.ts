// TEST PEER ONLY: a scriptable HTTP + WebSocket server on loopback that injects faults the real local service never makes.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/*
 * Used by the cloud client's integration tests for what src/service cannot be asked to do: a 429 with a
 * chosen Retry-After, a connection reset before any byte, an SSE body cut mid-event or written in odd
 * pieces, a stream that stops without [DONE]. It is plain node:http (not fastify) because the faults
 * need the raw socket. It is not an implementation of the API and must never be used as one.
 */

export interface PeerRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

export type PeerHandler = (req: PeerRequest, res: ServerResponse, raw: IncomingMessage) => void | Promise<void>;

/** What to do with a socket upgrade: reject with a status and body, or accept and hand over the socket. */
export type UpgradeDecision = { reject: { status: number; body: string } } | { accept: (ws: WebSocket, req: PeerRequest) => void };

export interface CloudPeer {
  url: string;
  wsUrl: string;
  /** Every HTTP request received, in order. */
  requests: PeerRequest[];
  /** Every upgrade request received, in order. */
  upgrades: PeerRequest[];
  /** Handles `METHOD path`; handlers queued with `once` run first, one per request. */
  route(method: string, path: string, handler: PeerHandler): void;
  once(method: string, path: string, handler: PeerHandler): void;
  onUpgrade(path: string, decide: (req: PeerRequest) => UpgradeDecision): void;
  close(): Promise<void>;
}

/** Sends a JSON body with a status. */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** The SSE text of a chat stream: one `data:` line per event, then `data: [DONE]` unless `done` is false. */
export function sseText(events: unknown[], done = true): string {
  return events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + (done ? 'data: [DONE]\n\n' : '');
}

/** Writes `text` in pieces cut at the given byte offsets, waiting for each write to flush. */
export async function writeInPieces(res: ServerResponse, text: string, cuts: number[]): Promise<void> {
  const bytes = Buffer.from(text);
  const edges = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  for (let i = 0; i < edges.length - 1; i++) {
    await new Promise<void>((resolve, reject) => res.write(bytes.subarray(edges[i], edges[i + 1]), (err) => (err ? reject(err) : resolve())));
  }
}

/** Starts the peer on 127.0.0.1 and a free port. Unrouted requests get 599 so a test notices. */
export async function startCloudPeer(): Promise<CloudPeer> {
  const routes = new Map<string, PeerHandler>();
  const queued = new Map<string, PeerHandler[]>();
  const upgradeRoutes = new Map<string, (req: PeerRequest) => UpgradeDecision>();
  const requests: PeerRequest[] = [];
  const upgrades: PeerRequest[] = [];
  const sockets = new Set<Socket>();

  const toPeerRequest = (raw: IncomingMessage, body: string): PeerRequest => {
    const u = new URL(raw.url ?? '/', 'http://peer');
    return { method: raw.method ?? 'GET', path: u.pathname, query: u.searchParams, headers: raw.headers, body };
  };

  const server = createServer((raw, res) => {
    const chunks: Buffer[] = [];
    raw.on('data', (c: Buffer) => chunks.push(c));
    raw.on('end', () => {
      const req = toPeerRequest(raw, Buffer.concat(chunks).toString('utf8'));
      requests.push(req);
      const key = `${req.method} ${req.path}`;
      const handler = queued.get(key)?.shift() ?? routes.get(key);
      if (!handler) return sendJson(res, 599, { error: `test peer: no route for ${key}` });
      Promise.resolve(handler(req, res, raw)).catch((err: unknown) => {
        if (!res.headersSent) sendJson(res, 599, { error: `test peer handler failed: ${String(err)}` });
        else res.destroy();
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  const wss = new WebSocketServer({ noServer: true });
  server.on('upgrade', (raw, socket, head) => {
    const req = toPeerRequest(raw, '');
    upgrades.push(req);
    const decide = upgradeRoutes.get(req.path);
    const decision: UpgradeDecision = decide ? decide(req) : { reject: { status: 404, body: JSON.stringify({ error: 'test peer: no socket here' }) } };
    if ('reject' in decision) {
      const { status, body } = decision.reject;
      socket.end(
        `HTTP/1.1 ${status} Rejected\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(raw, socket, head, (ws) => decision.accept(ws, req));
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}`,
    requests,
    upgrades,
    route: (method, path, handler) => void routes.set(`${method} ${path}`, handler),
    once: (method, path, handler) => {
      const key = `${method} ${path}`;
      queued.set(key, [...(queued.get(key) ?? []), handler]);
    },
    onUpgrade: (path, decide) => void upgradeRoutes.set(path, decide),
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      wss.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
