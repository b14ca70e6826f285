// The WebSim server: one page, its module, the statechart SVG and a WebSocket of agent events, guarded by auth.ts.
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { WebSocketServer, WebSocket } from 'ws';
import type { Subscription } from 'rxjs';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { AgentControl, SimulatorHandle } from '../cortex/contracts.js';
import { projectRoot } from '../paths.js';
import { redact, redactDeep } from '../redact.js';
import { elkSvg, renderSvg } from '../modes/svg.js';
import { checkOrigin, checkToken, sessionCookie } from './auth.js';
import { CSP, STYLE, pageHtml } from './html.js';
import { buildMeta } from './meta.js';
import { EstopMessages, handleEstop, isEstopMessage } from './estop.js';
import { PORT_ENV, WebSimError, type ResolvedWebSimOptions } from './options.js';
import { listenOnFreePort } from './port.js';
import { initialState, reduce, type MediaStatus, type ServerMessage, type SimEvent, type SimMeta, type SimState } from './page/state.js';

/** Where the compiled page modules live (tsconfig.websim.json's outDir). */
export const defaultPageDir = (): string => join(projectRoot(), 'dist', 'websim');

/** Longest message the page may send; a typed line is at most 2000 characters. */
const MAX_CLIENT_MESSAGE = 16 * 1024;
/** A client that lets this much pile up unsent is too slow to follow and is dropped. */
const MAX_BUFFERED = 8 * 1024 * 1024;
const PAGE_FILE = /^[a-z][a-z0-9-]*\.js$/;
/** How often connected pages get the microphone level and news of a camera frame. */
const MEDIA_PERIOD_MS = 250;
/** How often the camera frame is asked for (the page then fetches /frame.jpg). */
const FRAME_PERIOD_MS = 1000;

const ClientMessage = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('mode.switch'), id: z.number().int(), mode: z.string().min(1).max(200) }),
  z.strictObject({ type: z.literal('text'), id: z.number().int(), text: z.string().trim().min(1).max(2000) }),
  z.strictObject({
    type: z.literal('context'),
    id: z.number().int(),
    name: z
      .string()
      .trim()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,99}$/),
    value: z.string().trim().max(200),
  }),
  ...EstopMessages,
]);

export interface WebSimDeps {
  agent: AgentControl;
  logger: Logger;
  /** Directory of the compiled page modules; default `dist/websim` of the project. */
  pageDir?: string;
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

  constructor(options: ResolvedWebSimOptions, deps: WebSimDeps) {
    this.options = options;
    this.agent = deps.agent;
    this.logger = deps.logger;
    this.pageDir = deps.pageDir ?? defaultPageDir();
    this.meta = buildMeta(deps.agent);
    this.state = initialState(deps.agent.currentMode());
  }

  /** The page's address once listening (`http://127.0.0.1:8000/`); the token is never part of it. */
  get url(): string | undefined {
    return this.boundUrl;
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
      this.starting = this.doStart();
    }
    return this.starting;
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStart(): Promise<void> {
    this.svg = await this.renderGraph();
    const app = Fastify({ logger: false, bodyLimit: MAX_CLIENT_MESSAGE });
    this.app = app;
    this.wss = new WebSocketServer({ noServer: true, maxPayload: MAX_CLIENT_MESSAGE });
    this.routes(app);
    app.server.on('upgrade', (req, socket, head) => this.onUpgrade(req, socket, head));
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
    this.logger.info(`WebSim at ${this.boundUrl}${this.options.token ? ' (token required)' : ''}`);
    this.agent.bus.emit({
      type: 'simulator.ready',
      at: Date.now(),
      simulator: 'WebSim',
      url: this.boundUrl,
      ...(this.options.token ? { token_required: true } : {}),
    });
  }

  private async doStop(): Promise<void> {
    await this.starting?.catch(() => undefined);
    await this.release();
  }

  /** Closes whatever `doStart` opened so far: bus subscription, media timer, sockets, server. */
  private async release(): Promise<void> {
    this.subscription?.unsubscribe();
    clearInterval(this.mediaTimer);
    this.mediaTimer = undefined;
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
   * Runs while at least one page is connected: every MEDIA_PERIOD_MS the microphone level, every
   * FRAME_PERIOD_MS the newest camera frame (kept for /frame.jpg), sent to the pages as a `media`
   * message. Asking keeps the camera input encoding frames; nobody watching, nothing is encoded.
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
      };
      this.broadcast({ type: 'media', media: this.media });
    } catch (err) {
      this.logger.warn(`WebSim: media preview failed: ${redact((err as Error).message)}`);
    }
  }

  private broadcast(message: ServerMessage): void {
    if (!this.wss || this.wss.clients.size === 0) return;
    const text = JSON.stringify(message);
    for (const client of this.wss.clients) {
      if (client.readyState !== WebSocket.OPEN) continue;
      if (client.bufferedAmount > MAX_BUFFERED) client.terminate();
      else client.send(text);
    }
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
      const auth = checkToken(req.headers, url, this.options.token);
      if (!auth.ok) return reply.code(401).header('www-authenticate', 'Bearer realm="cortexd-websim"').send({ error: auth.reason });
      if (auth.via === 'query' && this.options.token !== undefined) {
        // A browser that came with ?token= gets a session cookie, and the token leaves the address bar.
        reply.header('set-cookie', sessionCookie(this.options.token));
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

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://websim.invalid');
    if (url.pathname !== '/events' || !this.wss) return this.refuse(socket, 404, 'Not Found');
    const origin = checkOrigin(req.headers, this.options.loopback);
    if (!origin.ok) return this.refuse(socket, 403, 'Forbidden');
    if (!checkToken(req.headers, url, this.options.token).ok) return this.refuse(socket, 401, 'Unauthorized');
    this.wss.handleUpgrade(req, socket, head, (ws) => this.onConnection(ws));
  }

  private send(ws: WebSocket, message: ServerMessage): void {
    if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(message));
  }

  private onConnection(ws: WebSocket): void {
    ws.on('error', () => ws.terminate());
    this.send(ws, { type: 'snapshot', ...this.snapshot() });
    this.send(ws, { type: 'media', media: this.media });
    this.pollMedia();
    ws.on('message', (data) => void this.onClientMessage(ws, data.toString()));
  }

  private async onClientMessage(ws: WebSocket, text: string): Promise<void> {
    let parsed: z.infer<typeof ClientMessage>;
    try {
      const result = ClientMessage.safeParse(JSON.parse(text));
      if (!result.success) return ws.close(1008, 'bad message');
      parsed = result.data;
    } catch {
      return ws.close(1008, 'bad message');
    }
    if (isEstopMessage(parsed)) return this.send(ws, handleEstop(this.agent, this.options.token, parsed));
    if (parsed.type === 'text') {
      const ok = this.agent.pushText(parsed.text);
      this.send(
        ws,
        ok ? { type: 'reply', id: parsed.id, ok } : { type: 'reply', id: parsed.id, ok, reason: `mode ${this.agent.currentMode()} has no TextInput` },
      );
      return;
    }
    if (parsed.type === 'context') {
      if (!this.agent.setContext) return this.send(ws, { type: 'reply', id: parsed.id, ok: false, reason: 'this agent takes no context values' });
      const value = contextValue(parsed.value);
      this.agent.setContext({ [parsed.name]: value }, 'websim');
      this.send(ws, { type: 'reply', id: parsed.id, ok: true, reason: `${parsed.name} = ${JSON.stringify(value)}` });
      return;
    }
    if (!this.meta.allow_manual_switching) {
      this.send(ws, { type: 'reply', id: parsed.id, ok: false, reason: this.meta.manual_disabled_reason ?? 'manual switching is off' });
      return;
    }
    try {
      const result = await this.agent.switchMode(parsed.mode, 'from WebSim');
      this.send(ws, { type: 'reply', id: parsed.id, ok: result.ok, ...(result.reason !== undefined ? { reason: redact(result.reason) } : {}) });
    } catch (err) {
      this.send(ws, { type: 'reply', id: parsed.id, ok: false, reason: redact((err as Error).message) });
    }
  }
}

/**
 * A context value as typed in WebSim: `true`/`false` are booleans, a decimal number is a number, and
 * anything else (including an empty field) is the text itself, so `battery_percent` = `15` compares
 * as a number in a `context_aware` rule.
 */
export function contextValue(text: string): string | number | boolean {
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}
