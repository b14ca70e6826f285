// A live Foxglove WebSocket server on loopback: the same channels as a recording, sent only to clients with the token that subscribed.
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import foxglove from '@foxglove/ws-protocol';
import { WebSocketServer } from 'ws';
import { describePeer, peerKeyOf } from '../local-peer.js';
import { AttemptLimiter, checkToken, hostName, presentsToken } from '../websim/auth.js';
import { isLoopbackHost } from '../websim/options.js';
import type { ChannelSpec } from './channels.js';

// A CommonJS package whose named exports Node cannot see from ESM: taken from its default export.
const { FoxgloveServer } = foxglove;
type FoxgloveServer = InstanceType<typeof FoxgloveServer>;

export interface FoxgloveLiveOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  /** A client that does not read is closed once this many bytes wait for it (default 8 MiB). */
  maxBufferedBytes?: number;
  /** Clients at once (default 8). */
  maxClients?: number;
  /**
   * The token a client must present (`?token=` in the URL Foxglove opens, `Authorization: Bearer`, or
   * `X-WebSim-Token`): the camera, the microphone and the prompts go to no one without it.
   */
  token: string;
  /** Browser origins that may connect besides none at all (native clients); default FOXGLOVE_ORIGINS. */
  allowedOrigins?: readonly string[];
  onError?: (message: string) => void;
}

/**
 * Origins of the Foxglove apps: the web app, and the desktop apps (Foxglove, Lichtblick), which load
 * their page from file://. A page of any other site open in the operator's browser is refused even
 * with the token (it could have read it from nowhere, but a leaked URL stays useless to it).
 */
export const FOXGLOVE_ORIGINS: readonly string[] = ['https://app.foxglove.dev', 'https://studio.foxglove.dev', 'https://lichtblick-suite.github.io', 'file://'];

/** Why an upgrade is refused, or undefined when it may connect. */
export async function refuseFoxglove(
  req: IncomingMessage,
  token: string,
  loopbackBind: boolean,
  origins: readonly string[],
  limiter: AttemptLimiter,
): Promise<{ status: number; reason: string } | undefined> {
  const host = req.headers.host;
  if (!host) return { status: 400, reason: 'missing Host header' };
  // DNS rebinding: a page whose own name resolves to 127.0.0.1 still sends its name as Host.
  if (loopbackBind && !isLoopbackHost(hostName(host))) return { status: 403, reason: `Host ${JSON.stringify(host)} is not a loopback name` };
  const origin = req.headers.origin;
  if (origin !== undefined && !origins.includes(origin.toLowerCase().replace(/\/$/, '')))
    return { status: 403, reason: `Origin ${JSON.stringify(origin)} refused` };
  const url = new URL(req.url ?? '/', 'http://foxglove.invalid');
  if (!presentsToken(req.headers, url)) return { status: 401, reason: 'the Foxglove socket needs the token: open ws://HOST:PORT/?token=TOKEN' };
  const peer = await peerKeyOf(req.socket);
  let ok = false;
  const r = limiter.attempt(peer, () => (ok = checkToken(req.headers, url, token).ok));
  if (r.result === 'locked') return { status: 429, reason: `too many wrong tokens from ${describePeer(peer)}` };
  return ok ? undefined : { status: 401, reason: 'wrong token' };
}

/**
 * Channels are advertised when their first message comes, so a client sees the topics this run has.
 * A slow client is closed rather than buffered without bound: live views are latest-wins by nature.
 */
export class FoxgloveLive {
  private readonly server: FoxgloveServer;
  private readonly wss: WebSocketServer;
  private readonly channels = new Map<string, number>();
  private readonly subscribed = new Set<number>();

  private constructor(
    wss: WebSocketServer,
    private readonly options: FoxgloveLiveOptions,
  ) {
    this.wss = wss;
    this.server = new FoxgloveServer({ name: 'cortexd' });
    this.server.on('subscribe', (id) => this.subscribed.add(id));
    this.server.on('unsubscribe', (id) => this.subscribed.delete(id));
    this.server.on('error', (err) => options.onError?.(`foxglove: ${err.message}`));
    const maxClients = options.maxClients ?? 8;
    wss.on('connection', (conn, req) => {
      if (wss.clients.size > maxClients) {
        conn.close(1013, 'too many clients');
        return;
      }
      this.server.handleConnection(conn, `${req.socket.remoteAddress ?? '?'}:${req.socket.remotePort ?? '?'}`);
    });
  }

  static async start(options: FoxgloveLiveOptions): Promise<FoxgloveLive> {
    const host = options.host ?? '127.0.0.1';
    const limiter = new AttemptLimiter();
    const origins = (options.allowedOrigins ?? FOXGLOVE_ORIGINS).map((o) => o.toLowerCase());
    const loopbackBind = isLoopbackHost(host);
    const wss = new WebSocketServer({
      host,
      port: options.port,
      maxPayload: 64 * 1024,
      verifyClient: ({ req }, done) =>
        void refuseFoxglove(req, options.token, loopbackBind, origins, limiter).then((refused) =>
          refused ? done(false, refused.status, refused.reason) : done(true),
        ),
      handleProtocols: (protocols) => {
        const chosen = [...protocols].find((p) => p === FoxgloveServer.SUPPORTED_SUBPROTOCOL);
        return chosen ?? false;
      },
    });
    await new Promise<void>((resolve, reject) => {
      wss.once('listening', () => resolve());
      wss.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new Error(
            err.code === 'EADDRINUSE' ? `the Foxglove port ${options.port} is in use: pass another (--foxglove PORT)` : `Foxglove server: ${err.message}`,
          ),
        ),
      );
    });
    return new FoxgloveLive(wss, options);
  }

  /** `ws://host:port`, what Foxglove or Lichtblick opens, with `/?token=` added (urlWithToken). */
  get url(): string {
    const a = this.wss.address() as AddressInfo;
    return `ws://${a.address}:${a.port}`;
  }

  /** `message` is made only when a client subscribed to the channel. */
  publish(spec: ChannelSpec, message: () => unknown, atMs: number): void {
    let id = this.channels.get(spec.topic);
    if (id === undefined) {
      id = this.server.addChannel(
        spec.ros2msg !== undefined
          ? { topic: spec.topic, encoding: 'cdr', schemaName: spec.schemaName, schema: spec.ros2msg, schemaEncoding: 'ros2msg' }
          : { topic: spec.topic, encoding: 'json', schemaName: spec.schemaName, schema: JSON.stringify(spec.schema), schemaEncoding: 'jsonschema' },
      );
      this.channels.set(spec.topic, id);
    }
    if (!this.subscribed.has(id)) return;
    const limit = this.options.maxBufferedBytes ?? 8 * 1024 * 1024;
    for (const client of this.wss.clients) if (client.bufferedAmount > limit) client.terminate();
    const made = message();
    this.server.sendMessage(id, BigInt(Math.round(atMs)) * 1_000_000n, made instanceof Uint8Array ? made : Buffer.from(JSON.stringify(made)));
  }

  async close(): Promise<void> {
    for (const client of this.wss.clients) client.terminate();
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}
