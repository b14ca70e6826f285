// Prometheus metrics of the runtime (prom-client) and their loopback-only HTTP endpoint, off unless a port is given.
import type { Server } from 'node:http';
import { httpLimits, limitedServer, type HttpLimits } from '../http-limits.js';
import { isIP } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CortexError } from '../errors.js';

/** States a stream socket (ASR, VLM) reports; exactly one is 1 per socket in `cortexd_socket_state`. */
export const SOCKET_STATES = ['connecting', 'streaming', 'backing_off', 'failed', 'closed'] as const;
export type SocketState = (typeof SOCKET_STATES)[number];

/** Latency buckets in seconds, from a fast local model to a slow hosted one. */
const LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32];
/** Turn stage buckets in seconds: a first sound under 1.5 s is the target, 5-10 s the complaint. */
const TURN_BUCKETS = [0.05, 0.1, 0.25, 0.5, 0.75, 1, 1.5, 2, 3, 5, 8, 13];
/** Tick lateness buckets in seconds: how far past its scheduled time a tick started. */
const LATENESS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/**
 * Every metric of one runtime, on its own registry (never prom-client's global one, so two agents
 * in one test process do not collide). The record* methods take milliseconds, as all code does,
 * and store seconds, as Prometheus expects. Recording is cheap and always on; only serving is
 * optional (see MetricsServer).
 */
export class Metrics {
  readonly registry = new Registry();

  readonly ticks: Counter<'mode'>;
  readonly tickRate: Gauge<'mode'>;
  readonly tickLateness: Histogram<'mode'>;
  readonly currentMode: Gauge<'mode'>;
  readonly modelLatency: Histogram<'model'>;
  readonly modelErrors: Counter<'model' | 'kind'>;
  readonly modelHealth: Counter<'model' | 'state'>;
  readonly socketState: Gauge<'socket' | 'state'>;
  readonly socketReconnects: Counter<'socket'>;
  readonly framesDropped: Counter<'input'>;
  readonly audioDroppedBytes: Counter<'input'>;
  readonly actionQueueLength: Gauge<'action'>;
  readonly cuSpent: Counter<'service'>;
  readonly estopLatched: Gauge;
  readonly estops: Counter<'source'>;
  readonly safetyStops: Counter<'cause'>;
  readonly motionRefused: Counter<'cause'>;
  readonly turnLatency: Histogram<'stage'>;

  // long: one registration per metric of the process, read as its table of names, help texts, labels and buckets.
  constructor(options: { defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.ticks = new Counter({ name: 'cortexd_ticks_total', help: 'Cortex loop ticks run, per mode', labelNames: ['mode'], registers });
    this.tickRate = new Gauge({ name: 'cortexd_tick_rate_hertz', help: 'Configured loop frequency of the mode', labelNames: ['mode'], registers });
    this.tickLateness = new Histogram({
      name: 'cortexd_tick_lateness_seconds',
      help: 'How late a tick started after its scheduled time',
      labelNames: ['mode'],
      buckets: LATENESS_BUCKETS,
      registers,
    });
    this.currentMode = new Gauge({ name: 'cortexd_mode_current', help: '1 for the current mode, 0 for the others', labelNames: ['mode'], registers });
    this.modelLatency = new Histogram({
      name: 'cortexd_model_latency_seconds',
      help: 'Time from request to complete answer of a language model call',
      labelNames: ['model'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.modelErrors = new Counter({
      name: 'cortexd_model_errors_total',
      help: 'Failed language model calls, by kind (timeout, http status, invalid answer)',
      labelNames: ['model', 'kind'],
      registers,
    });
    this.modelHealth = new Counter({
      name: 'cortexd_model_health_changes_total',
      help: 'Changes of a model plugin health for the session: streaming_off (its streams could not be read), failing, healthy',
      labelNames: ['model', 'state'],
      registers,
    });
    this.socketState = new Gauge({
      name: 'cortexd_socket_state',
      help: `State of a stream socket: 1 for the current state (${SOCKET_STATES.join(', ')})`,
      labelNames: ['socket', 'state'],
      registers,
    });
    this.socketReconnects = new Counter({
      name: 'cortexd_socket_reconnects_total',
      help: 'Reconnections of a stream socket that came back (a streaming after the first)',
      labelNames: ['socket'],
      registers,
    });
    this.framesDropped = new Counter({
      name: 'cortexd_frames_dropped_total',
      help: 'Video frames dropped: replaced by a newer one (latest-frame-wins), skipped by the encoder, or seen while no socket was open',
      labelNames: ['input'],
      registers,
    });
    this.audioDroppedBytes = new Counter({
      name: 'cortexd_audio_dropped_bytes_total',
      help: 'PCM bytes dropped because the reconnect ring buffer was full',
      labelNames: ['input'],
      registers,
    });
    this.actionQueueLength = new Gauge({ name: 'cortexd_action_queue_length', help: 'Commands waiting in an action queue', labelNames: ['action'], registers });
    this.cuSpent = new Counter({ name: 'cortexd_cu_spent_total', help: 'Compute units spent on the hosted service', labelNames: ['service'], registers });
    this.estopLatched = new Gauge({ name: 'cortexd_safety_estop_latched', help: '1 while the emergency stop is latched', registers });
    this.estops = new Counter({
      name: 'cortexd_safety_estops_total',
      help: 'Emergency stops latched, by source (serial, socket, websim, fleet)',
      labelNames: ['source'],
      registers,
    });
    this.safetyStops = new Counter({
      name: 'cortexd_safety_stops_total',
      help: 'Stop commands the safety governor sent, by cause (estop, deadman, model_stall, service, geofence, max_continuous, stopping)',
      labelNames: ['cause'],
      registers,
    });
    this.motionRefused = new Counter({
      name: 'cortexd_safety_refused_total',
      help: 'Motion commands the safety governor refused, by cause',
      labelNames: ['cause'],
      registers,
    });
    this.turnLatency = new Histogram({
      name: 'cortexd_turn_latency_seconds',
      help: 'Time from the start of a voice turn (end of speech, else the final transcript, else the model request) to each of its stages',
      labelNames: ['stage'],
      buckets: TURN_BUCKETS,
      registers,
    });
    if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'cortexd_' });
  }

  /** A tick of `mode` started `latenessMs` after it was due. */
  recordTick(mode: string, latenessMs: number): void {
    this.ticks.inc({ mode });
    this.tickLateness.observe({ mode }, Math.max(0, latenessMs) / 1000);
  }

  /** The agent entered `mode`, which runs at `hertz`. */
  enterMode(mode: string, hertz: number): void {
    this.currentMode.reset();
    this.currentMode.set({ mode }, 1);
    this.tickRate.set({ mode }, hertz);
  }

  /** A model call finished after `latencyMs`; `errorKind` when it failed. */
  /** A model's health changed (`model` bus event). */
  recordModelHealth(model: string, state: string): void {
    this.modelHealth.inc({ model, state });
  }

  recordModelCall(model: string, latencyMs: number, errorKind?: string): void {
    if (errorKind) this.modelErrors.inc({ model, kind: errorKind });
    else this.modelLatency.observe({ model }, latencyMs / 1000);
  }

  /**
   * A stream socket changed state. Every `streaming` after the first of a stream counts as a
   * reconnect (a connection that came back); `closed` ends the stream, so the next one starts over.
   */
  setSocketState(socket: string, state: SocketState): void {
    if (state === 'streaming') {
      if (this.wasStreaming.has(socket)) this.socketReconnects.inc({ socket });
      this.wasStreaming.add(socket);
    }
    if (state === 'closed') this.wasStreaming.delete(socket);
    for (const s of SOCKET_STATES) this.socketState.set({ socket, state: s }, s === state ? 1 : 0);
  }
  private readonly wasStreaming = new Set<string>();

  recordDroppedFrames(input: string, count = 1): void {
    this.framesDropped.inc({ input }, count);
  }

  recordDroppedAudio(input: string, bytes: number): void {
    this.audioDroppedBytes.inc({ input }, bytes);
  }

  setActionQueueLength(action: string, length: number): void {
    this.actionQueueLength.set({ action }, length);
  }

  /** Compute units charged by the hosted service (chat, tts, asr; vision is not metered). */
  recordCu(service: string, cu: number): void {
    if (cu > 0) this.cuSpent.inc({ service }, cu);
  }

  /** The safety governor latched (restored: found latched at start, not counted again) or released the e-stop. */
  recordEstop(latched: boolean, source: string, restored = false): void {
    this.estopLatched.set(latched ? 1 : 0);
    if (latched && !restored) this.estops.inc({ source });
  }

  recordSafetyStop(cause: string): void {
    this.safetyStops.inc({ cause });
  }

  recordMotionRefused(cause: string): void {
    this.motionRefused.inc({ cause });
  }

  /** A stage of a voice turn happened `ms` after the turn's origin. */
  recordTurnStage(stage: string, ms: number): void {
    this.turnLatency.observe({ stage }, Math.max(0, ms) / 1000);
  }

  /** The exposition text a scrape returns. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }
}

export interface MetricsServerOptions {
  /** TCP port; 0 picks a free one (tests). */
  port: number;
  /** Loopback address to bind; default 127.0.0.1. Anything else is refused. */
  host?: string;
  /** Header, body and idle timeouts and the per-peer connection cap (src/http-limits.ts); defaults there, a scraper needs 4 at once at most. */
  limits?: Partial<HttpLimits>;
}

/** True for 127.0.0.0/8, ::1 and localhost: the only places the endpoint may listen. */
export function isLoopback(host: string): boolean {
  if (host === 'localhost' || host === '::1') return true;
  return isIP(host) === 4 && host.startsWith('127.');
}

/**
 * Where to serve metrics according to the environment: `CORTEX_METRICS_PORT` (and optionally
 * `CORTEX_METRICS_HOST`, loopback only). Undefined, meaning off, when the port is unset or empty.
 */
export function metricsOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): MetricsServerOptions | undefined {
  const text = env.CORTEX_METRICS_PORT?.trim();
  if (!text) return undefined;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new CortexError('metrics_port', `CORTEX_METRICS_PORT must be a port number, got "${text}"`);
  }
  const host = env.CORTEX_METRICS_HOST?.trim();
  return host ? { port, host } : { port };
}

/**
 * Owner of the HTTP endpoint: `GET /metrics` returns the exposition text, anything else 404.
 * Listens on loopback only: metrics name modes, models and inputs of the robot, and Prometheus
 * on another host should scrape through an SSH tunnel or a local agent, not an open port.
 */
export class MetricsServer {
  private server: Server | undefined;
  private readonly host: string;
  private readonly port: number;
  private readonly limits: HttpLimits;

  constructor(
    private readonly metrics: Metrics,
    options: MetricsServerOptions,
  ) {
    this.host = options.host ?? '127.0.0.1';
    this.port = options.port;
    this.limits = httpLimits({ maxConnectionsPerPeer: 8, ...options.limits });
    if (!isLoopback(this.host)) {
      throw new CortexError('metrics_not_loopback', `the metrics endpoint listens on loopback only, not on ${this.host}`);
    }
  }

  /** Starts listening; resolves with the address actually bound. */
  async start(): Promise<{ host: string; port: number; url: string }> {
    if (this.server) throw new CortexError('metrics_started', 'the metrics endpoint is already running');
    const server = limitedServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      if (req.method !== 'GET' || path !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: scrape /metrics\n');
        return;
      }
      this.metrics.scrape().then(
        (text) => res.writeHead(200, { 'content-type': this.metrics.registry.contentType }).end(text),
        () => res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics collection failed\n'),
      );
    }, this.limits);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, this.host, () => {
        server.off('error', reject);
        resolve();
      });
    }).catch((err: unknown) => {
      this.server = undefined;
      throw new CortexError('metrics_listen', `cannot serve metrics on ${this.host}:${this.port}: ${String((err as Error).message ?? err)}`, { cause: err });
    });
    const addr = server.address();
    const port = typeof addr === 'object' && addr ? addr.port : this.port;
    const hostPart = this.host.includes(':') ? `[${this.host}]` : this.host;
    return { host: this.host, port, url: `http://${hostPart}:${port}/metrics` };
  }

  /** Stops listening and closes open scrape connections. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
