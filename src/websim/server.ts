// The WebSim server: one page, its module, the statechart SVG and a WebSocket of agent events, guarded by auth.ts.
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { WebSocket, WebSocketServer } from 'ws';
import type { Subscription } from 'rxjs';
import type { Logger } from 'pino';
import type { AgentControl, SimulatorHandle } from '../cortex/contracts.js';
import { httpLimits, limitedServer, type HttpLimits } from '../http-limits.js';
import { describePeer, peerKeyOf } from '../local-peer.js';
import { projectRoot, stateDir as defaultStateDir } from '../paths.js';
import { redact, redactDeep } from '../redact.js';
import { elkSvg, renderSvg } from '../modes/svg.js';
import { AttemptLimiter, checkOrigin, checkToken, presentsToken, sessionCookie, type AuthResult } from './auth.js';
import { CSP, STYLE, pageHtml } from './html.js';
import { buildMeta } from './meta.js';
import { ClientMessage, handleMessage, type PageSession } from './messages.js';
import { PORT_ENV, WebSimError, type ResolvedWebSimOptions } from './options.js';
import { listenOnFreePort } from './port.js';
import { DEFAULT_SOCKET_LIMITS, SocketGuard, type DropReason, type SocketLimits } from './socket-guard.js';
import { loadOrCreateToken } from './token.js';
import { randomUUID } from 'node:crypto';
import { DEFAULT_AUDIO_LIMITS, WebSimVoice, speechMessage, type AudioLimits } from './voice.js';
import { initialState, reduce, type MediaStatus, type ServerMessage, type SimEvent, type SimMeta, type SimState } from './page/state.js';

export { contextValue } from './messages.js';

/** Where the compiled page modules live (tsconfig.websim.json's outDir). */
export const defaultPageDir = (): string => join(projectRoot(), 'dist', 'websim');

/** Longest HTTP body accepted (the page posts nothing; this bounds what a client may send anyway). */
const MAX_BODY = 16 * 1024;
/** Drops of page sockets are reported on the bus at most this often (a flood of clients is one line). */
const DROP_REPORT_MS = 10_000;
const PAGE_FILE = /^[a-z][a-z0-9-]*\.js$/;
/** How often connected pages get the microphone level and news of a camera frame. */
const MEDIA_PERIOD_MS = 250;
/** How often the camera frame is asked for (the page then fetches /frame.jpg). */
const FRAME_PERIOD_MS = 1000;

export interface WebSimDeps {
  agent: AgentControl;
  logger: Logger;
  /** Directory of the compiled page modules; default `dist/websim` of the project. */
  pageDir?: string;
  /** Where a generated token is kept (`websim-token`, 0600); default the agent's state directory. */
  stateDir?: string;
  /** Time and size limits; defaults in src/http-limits.ts and socket-guard.ts (tests shorten them). */
  limits?: { http?: Partial<HttpLimits>; socket?: Partial<SocketLimits>; audio?: Partial<AudioLimits> };
  /**
   * Render the graph, build the server and listen only once this settles (the agent gives its first
   * tick): the page's events are reduced from `start()` on, so none is missed meanwhile.
   */
  startAfter?: Promise<void>;
}

/** A connected page: what it proved, and the guard that pings it and bounds what waits for it. */
interface Page {
  session: PageSession;
  guard: SocketGuard;
}

/**
 * One WebSim server for the whole agent. `start()` and `stop()` are idempotent: a second `start()`
 * returns the first one's promise, so several modes listing WebSim still make one server.
 */
export class WebSim implements SimulatorHandle {
  private readonly options: ResolvedWebSimOptions;
  private readonly agent: AgentControl;
  private readonly logger: Logger;
  private readonly pageDir: string;
  private readonly startAfter: Promise<void> | undefined;
  private readonly meta: SimMeta;
  private state: SimState;
  private app: FastifyInstance | undefined;
  private wss: WebSocketServer | undefined;
  private subscription: Subscription | undefined;
  private svg = '';
  private starting: Promise<void> | undefined;
  private stopping: Promise<void> | undefined;
  private boundUrl: string | undefined;
  /** Polls the agent's media preview while a page is connected (media never goes on the bus). */
  private mediaTimer: NodeJS.Timeout | undefined;
  private lastFrame: { input: string; jpeg: Buffer; at: number } | undefined;
  private lastFrameAskAt = 0;
  private media: MediaStatus = { frame: null, level: null };
  private readonly stateDir: string;
  private readonly httpLimits: HttpLimits;
  private readonly socketLimits: SocketLimits;
  /** The token actions need: the configured one, or the one generated at start. */
  private token = '';
  /** Where the generated token is kept; undefined when the token is configured. */
  private tokenFile: string | undefined;
  private readonly limiter = new AttemptLimiter();
  private readonly pages = new Map<WebSocket, Page>();
  private drops: Record<DropReason, number> = { 'no pong': 0, 'trickled frame': 0, 'slow reader': 0, 'audio flood': 0, 'bad audio': 0 };
  /** The page's microphone and the robot's speech in the page (voice.ts). */
  private readonly voice: WebSimVoice;
  private speechSubscription: Subscription | undefined;
  private dropsReportedAt = 0;

  constructor(options: ResolvedWebSimOptions, deps: WebSimDeps) {
    this.options = options;
    this.agent = deps.agent;
    this.logger = deps.logger;
    this.pageDir = deps.pageDir ?? defaultPageDir();
    this.startAfter = deps.startAfter;
    this.stateDir = deps.stateDir ?? defaultStateDir();
    this.httpLimits = httpLimits(deps.limits?.http);
    this.socketLimits = { ...DEFAULT_SOCKET_LIMITS, ...deps.limits?.socket };
    this.meta = buildMeta(deps.agent);
    this.voice = new WebSimVoice(deps.agent.browserAudio, { ...DEFAULT_AUDIO_LIMITS, ...deps.limits?.audio });
    this.state = initialState(deps.agent.currentMode());
  }

  /** The page's address once listening (`http://127.0.0.1:8000/`); the token is never part of it. */
  get url(): string | undefined {
    return this.boundUrl;
  }

  /** Whether viewing needs the token too (a configured token), or only acting does (a generated one). */
  get viewNeedsToken(): boolean {
    return this.options.token !== undefined;
  }

  /** Page sockets dropped so far, by reason (a slow reader, no pong, a trickled frame). */
  get dropped(): Readonly<Record<DropReason, number>> {
    return this.drops;
  }

  /** The current snapshot (what a freshly connected page receives). */
  snapshot(): { meta: SimMeta; state: SimState } {
    return {
      meta: this.meta,
      state: { ...this.state, mode: this.agent.currentMode(), safety: { ...this.state.safety, estop: this.agent.safetyStatus().estop } },
    };
  }

  start(): Promise<void> {
    if (this.stopping) return Promise.reject(new WebSimError('websim_stopped', 'WebSim was stopped; create a new one'));
    if (!this.starting) {
      // Subscribe before the first await: on_startup and on_entry events fire while the graph renders.
      this.subscription = this.agent.bus.events$.subscribe((event) => this.onEvent(event as unknown as SimEvent));
      this.speechSubscription = this.voice.speech$?.subscribe((e) => this.toListeners(JSON.stringify(speechMessage(e))));
      this.starting = this.doStart();
    }
    return this.starting;
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStart(): Promise<void> {
    if (this.startAfter) {
      await this.startAfter;
      // Stopped before it was time to start: nothing was opened (doStop releases the subscriptions).
      if (this.stopping) return;
    }
    if (this.options.token !== undefined) this.token = this.options.token;
    else {
      const kept = loadOrCreateToken(this.stateDir);
      this.token = kept.token;
      this.tokenFile = kept.path;
    }
    this.svg = await this.renderGraph();
    // Loaded here, after the first tick when the agent waits for it (fastify's modules are ~17 ms of a start).
    const { default: Fastify } = await import('fastify');
    if (this.stopping) return;
    const limits = this.httpLimits;
    const app = Fastify({ logger: false, bodyLimit: MAX_BODY, serverFactory: (handler) => limitedServer(handler, limits) as Server });
    this.app = app;
    this.wss = new WebSocketServer({ noServer: true, maxPayload: this.socketLimits.maxMessageBytes });
    this.routes(app);
    app.server.on('upgrade', (req, socket, head) => void this.onUpgrade(req, socket, head));
    try {
      await listenOnFreePort(app, this.options, this.logger);
    } catch (err) {
      await this.release();
      const code = (err as NodeJS.ErrnoException).code;
      const why =
        code === 'EADDRINUSE'
          ? `the port is in use (another agent?): pass --websim-port N, or set ${PORT_ENV}`
          : code === 'EADDRNOTAVAIL'
            ? 'the address is not on this machine'
            : (err as Error).message;
      throw new WebSimError('websim_listen', `WebSim cannot listen on ${this.options.host}:${this.options.port}: ${why}`, { cause: err });
    }
    const address = app.server.address();
    const port = address && typeof address === 'object' ? address.port : this.options.port;
    const host = this.options.host.includes(':') ? `[${this.options.host}]` : this.options.host;
    this.boundUrl = `http://${host}:${port}/`;
    if (!existsSync(join(this.pageDir, 'app.js'))) this.logger.warn(`WebSim page modules missing in ${this.pageDir}: run npm run build`);
    this.logger.info(
      `WebSim at ${this.boundUrl}${this.viewNeedsToken ? ' (token required)' : ` (actions need the token kept in ${this.tokenFile ?? 'the config'})`}`,
    );
    // The bus carries where the token is, never the token: the fleet channel and --events read the bus.
    this.agent.bus.emit({
      type: 'simulator.ready',
      at: Date.now(),
      simulator: 'WebSim',
      url: this.boundUrl,
      ...(this.viewNeedsToken ? { token_required: true } : {}),
      ...(this.tokenFile ? { token_file: this.tokenFile } : {}),
    });
  }

  private async doStop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    await this.release();
  }

  /** Closes whatever `doStart` opened so far: bus subscription, media timer, sockets, server. */
  private async release(): Promise<void> {
    this.subscription?.unsubscribe();
    this.speechSubscription?.unsubscribe();
    for (const page of this.pages.values()) this.voice.closed(page.session.voice);
    clearInterval(this.mediaTimer);
    this.mediaTimer = undefined;
    for (const page of this.pages.values()) page.guard.dispose();
    this.pages.clear();
    for (const client of this.wss?.clients ?? []) client.close(1001, 'WebSim stopping');
    for (const client of this.wss?.clients ?? []) client.terminate();
    await new Promise<void>((resolve) => (this.wss ? this.wss.close(() => resolve()) : resolve()));
    await this.app?.close();
  }

  /** The statechart drawing of `cortexd graph --format svg`; elkjs when Graphviz fails, a note when both fail. */
  private async renderGraph(): Promise<string> {
    try {
      return (await renderSvg(this.agent.config)).svg;
    } catch (err) {
      this.logger.warn(`WebSim: Graphviz failed, using the elkjs layout: ${redact((err as Error).message)}`);
      try {
        return await elkSvg(this.agent.config);
      } catch (err2) {
        this.logger.error(`WebSim: statechart drawing failed: ${redact((err2 as Error).message)}`);
        return '<svg xmlns="http://www.w3.org/2000/svg" width="300" height="30"><text x="4" y="20">statechart unavailable</text></svg>';
      }
    }
  }

  private onEvent(raw: SimEvent): void {
    const event = redactDeep(raw) as SimEvent;
    this.state = reduce(this.state, event);
    this.broadcast({ type: 'event', event });
  }

  /**
   * Runs while at least one page is connected: every MEDIA_PERIOD_MS the microphone level and the
   * lidar's newest scan (its preview: points, free paths, the guard's lines), every FRAME_PERIOD_MS the
   * newest camera frame (kept for /frame.jpg), sent to the pages as a `media` message. Asking keeps the camera input encoding frames; nobody watching, nothing is encoded.
   */
  private pollMedia(): void {
    if (this.mediaTimer || !this.wss) return;
    this.mediaTimer = setInterval(() => void this.mediaTick(), MEDIA_PERIOD_MS);
    this.mediaTimer.unref();
  }

  private async mediaTick(): Promise<void> {
    if (!this.wss || this.wss.clients.size === 0) {
      clearInterval(this.mediaTimer);
      this.mediaTimer = undefined;
      return;
    }
    try {
      const level = this.agent.media.level();
      if (Date.now() - this.lastFrameAskAt >= FRAME_PERIOD_MS) {
        this.lastFrameAskAt = Date.now();
        this.lastFrame = await this.agent.media.frame();
      }
      this.media = {
        frame: this.lastFrame ? { input: this.lastFrame.input, at: this.lastFrame.at } : null,
        level: level ? { input: level.input, rms_dbfs: level.rms_dbfs, peak_dbfs: level.peak_dbfs, at: level.at } : null,
        scan: this.agent.media.scan?.() ?? null,
      };
      this.broadcast({ type: 'media', media: this.media });
    } catch (err) {
      this.logger.warn(`WebSim: media preview failed: ${redact((err as Error).message)}`);
    }
  }

  /** Sends to every page through its guard: a page with too much waiting unsent is dropped, never queued for. */
  private broadcast(message: ServerMessage): void {
    if (this.pages.size === 0) return;
    const text = JSON.stringify(message);
    for (const page of this.pages.values()) page.guard.send(text);
  }

  /** The robot's speech to the pages that listen; a page with too much waiting misses the sentence but stays. */
  private toListeners(text: string): void {
    for (const page of this.pages.values()) if (page.session.voice.listening) page.guard.offer(text);
  }

  /** Counts a dropped page socket; the counts go on the bus at most every DROP_REPORT_MS. */
  private onDrop(why: DropReason): void {
    this.drops[why] += 1;
    const now = Date.now();
    if (now - this.dropsReportedAt < DROP_REPORT_MS) return;
    this.dropsReportedAt = now;
    const counts = Object.entries(this.drops)
      .filter(([, n]) => n > 0)
      .map(([k, n]) => `${k}: ${n}`)
      .join(', ');
    this.agent.bus.emit({ type: 'error', at: now, source: 'websim', message: `WebSim dropped page sockets so far (${counts})` });
  }

  /**
   * The token check of a request or upgrade from `peer` (src/local-peer.ts: on this machine the local
   * user, never 127.0.0.1, so another user's wrong guesses lock out that user only, and rotating the
   * source within 127/8 is the same user): a presented token is compared through the attempt limiter
   * (wrong ones count, a locked-out peer is refused uncompared); none presented is `open` when viewing
   * needs no token.
   */
  private authorize(headers: IncomingHttpHeaders, url: URL, peer: string): AuthResult | { ok: false; reason: string; locked: number } {
    if (!presentsToken(headers, url)) {
      return this.viewNeedsToken ? checkToken(headers, url, this.token) : { ok: true, via: 'open' };
    }
    let result: AuthResult = { ok: false, reason: '', presented: true };
    const r = this.limiter.attempt(peer, () => {
      result = checkToken(headers, url, this.token);
      return result.ok;
    });
    if (r.result === 'locked')
      return { ok: false, reason: `too many wrong tokens from ${describePeer(peer)}: try again in ${Math.ceil(r.waitMs / 1000)} s`, locked: r.waitMs };
    return result;
  }

  private security(reply: FastifyReply): FastifyReply {
    return reply
      .header('content-security-policy', CSP)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('x-frame-options', 'DENY')
      .header('cache-control', 'no-store');
  }

  private routes(app: FastifyInstance): void {
    app.addHook('onRequest', async (req, reply) => {
      this.security(reply);
      const origin = checkOrigin(req.headers, this.options.loopback);
      if (!origin.ok) return reply.code(403).send({ error: origin.reason });
      const url = new URL(req.url, 'http://websim.invalid');
      const auth = this.authorize(req.headers, url, await peerKeyOf(req.socket));
      if (!auth.ok && 'locked' in auth)
        return reply
          .code(429)
          .header('retry-after', String(Math.ceil(auth.locked / 1000)))
          .send({ error: auth.reason });
      if (!auth.ok) return reply.code(401).header('www-authenticate', 'Bearer realm="cortexd-websim"').send({ error: auth.reason });
      if (auth.via === 'query') {
        // A browser that came with ?token= gets a session cookie, and the token leaves the address bar.
        reply.header('set-cookie', sessionCookie(this.token));
        if (req.method === 'GET' && url.pathname === '/') return reply.code(303).header('location', '/').send();
      }
      return undefined;
    });
    app.get('/', async (_req, reply) => reply.type('text/html; charset=utf-8').send(pageHtml(this.agent.configName)));
    app.get('/style.css', async (_req, reply) => reply.type('text/css; charset=utf-8').send(STYLE));
    app.get('/graph.svg', async (_req, reply) => reply.type('image/svg+xml; charset=utf-8').send(this.svg));
    app.get('/api/state', async (_req, reply) => reply.send(this.snapshot()));
    // The newest camera frame of the current mode (asked about once a second while a page is open); 204 when there is none.
    app.get('/frame.jpg', async (_req, reply) => {
      const frame = this.lastFrame;
      if (!frame) return reply.code(204).send();
      return reply.type('image/jpeg').header('x-frame-input', frame.input).header('x-frame-at', String(frame.at)).send(frame.jpeg);
    });
    app.get<{ Params: { file: string } }>('/static/:file', async (req, reply) => {
      const file = req.params.file;
      if (!PAGE_FILE.test(file)) return reply.code(404).send({ error: 'not found' });
      try {
        const body = await readFile(join(this.pageDir, file), 'utf8');
        return reply.type('text/javascript; charset=utf-8').send(body);
      } catch {
        return reply.code(file === 'app.js' ? 503 : 404).send({ error: file === 'app.js' ? 'WebSim page not built: run npm run build' : 'not found' });
      }
    });
  }

  /** Refuses an upgrade with a plain HTTP status line; the socket is closed right after. */
  private refuse(socket: Duplex, status: number, text: string): void {
    socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Type: text/plain\r\n\r\n${text}\n`);
  }

  private async onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://websim.invalid');
    if (url.pathname !== '/events' || !this.wss) return this.refuse(socket, 404, 'Not Found');
    const origin = checkOrigin(req.headers, this.options.loopback);
    if (!origin.ok) return this.refuse(socket, 403, 'Forbidden');
    const peer = await peerKeyOf(req.socket);
    if (socket.destroyed || !this.wss) return;
    const auth = this.authorize(req.headers, url, peer);
    if (!auth.ok && 'locked' in auth) return this.refuse(socket, 429, 'Too Many Requests');
    if (!auth.ok) return this.refuse(socket, 401, 'Unauthorized');
    // A socket opened with the token (header, query or cookie) may act; one opened without it may watch and latch the e-stop.
    const session: PageSession = { peer, authed: auth.via !== 'open', voice: this.voice.state(randomUUID()) };
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws, session));
  }

  private send(ws: WebSocket, message: ServerMessage): void {
    const page = this.pages.get(ws);
    if (page) page.guard.send(JSON.stringify(message));
  }

  private onConnection(ws: WebSocket, session: PageSession): void {
    const guard = new SocketGuard(ws, this.socketLimits, (why) => this.onDrop(why));
    this.pages.set(ws, { session, guard });
    ws.on('error', () => ws.terminate());
    ws.once('close', () => {
      guard.dispose();
      this.pages.delete(ws);
      this.voice.closed(session.voice);
    });
    this.send(ws, { type: 'snapshot', ...this.snapshot() });
    this.send(ws, { type: 'access', authed: session.authed });
    this.send(ws, { type: 'media', media: this.media });
    this.pollMedia();
    ws.on('message', (data, isBinary) => {
      if (!isBinary) return void this.onClientMessage(ws, session, data.toString());
      // Binary frames are the page's microphone: bounded in rate, heard only from the page that claimed it.
      // Frames that were already on their way when the page was cut are not looked at.
      if (ws.readyState !== WebSocket.OPEN) return;
      const outcome = this.voice.audio(session.voice, Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer));
      if (outcome.ok) return;
      this.voice.closed(session.voice);
      guard.cut(outcome.close, 1008, outcome.close);
    });
  }

  /** Parses one page message (a malformed one closes the socket with 1008) and hands it to messages.ts. */
  private async onClientMessage(ws: WebSocket, session: PageSession, text: string): Promise<void> {
    let parsed: ClientMessage;
    try {
      const result = ClientMessage.safeParse(JSON.parse(text));
      if (!result.success) return ws.close(1008, 'bad message');
      parsed = result.data;
    } catch {
      return ws.close(1008, 'bad message');
    }
    const before = session.authed;
    const reply = await handleMessage({ agent: this.agent, meta: this.meta, token: this.token, limiter: this.limiter, voice: this.voice }, session, parsed);
    this.send(ws, reply);
    if (session.authed !== before) this.send(ws, { type: 'access', authed: session.authed });
  }
}
