// Entry point of the local hosted-API service: startService() builds stores, routes and sockets, listens, and returns its addresses, admin handle and close().
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { createLogger } from '../log.js';
import { Accounts } from './accounts.js';
import { createAdmin, type ServiceAdmin } from './admin.js';
import { buildApp } from './app.js';
import { capConnectionsPerPeer } from './http/peers.js';
import { JwtAuthority, loadOrCreateSecret } from './auth.js';
import type { ServiceContext, ServicePools } from './context.js';
import { openDb } from './db.js';
import { ApiKeys } from './keys.js';
import { DEFAULT_LIMITS, KEY_OPS_RATE_LIMIT, defaultDbPath, defaultSecretPath, type ServiceLimits, type ServiceOptions } from './options.js';
import { FairPool } from './pool.js';
import { TokenBuckets } from './ratelimit.js';
import { attachSockets, ASR_SECOND_PATH, VLM_PATH } from './sockets.js';
import { VisionPool } from './vision-pool.js';

export type { ServiceOptions, ServiceLimits, BackendOptions, ChatBackendConfig, TtsBackendConfig } from './options.js';
export type { User } from './accounts.js';
export { ASR_SECOND_PATH, VLM_PATH } from './sockets.js';
export { openAdmin, type ServiceAdmin } from './admin.js';

export interface RunningService {
  /** HTTP base URL, e.g. http://127.0.0.1:PORT */
  url: string;
  /** WebSocket base URL of the main service (the `speechlab` ASR socket lives under it). */
  wsUrl: string;
  /** Full URL of the second (`speechb`) recognition socket: `${wsUrl}/asr`. */
  asrWsUrl: string;
  /** Full URL of the vision socket: `${wsUrl}/vlm`. */
  vlmWsUrl: string;
  port: number;
  admin: ServiceAdmin;
  close(): Promise<void>;
}

/** A fair pool of which one key takes at most half (at least one) of the running and of the total places. */
const halfPerKey = (name: string, running: number, queued: number): FairPool =>
  new FairPool({ name, running, queued, perKeyRunning: Math.max(1, Math.ceil(running / 2)), perKeyTotal: Math.max(1, Math.ceil(queued / 2)) });

/** The service's bounded worker pools: speech synthesis and recognition (a key takes at most half of each), and vision workers. */
function poolsFor(limits: ServiceLimits, logger: Logger): ServicePools {
  return {
    tts: halfPerKey('speech synthesis', limits.ttsWorkers, limits.ttsQueue),
    asr: halfPerKey('recognition', limits.asrDecoders, limits.asrDecodeQueue),
    vision: new VisionPool({
      workers: limits.vlmWorkers,
      queue: limits.vlmQueue,
      queuePerKey: limits.vlmQueuePerKey,
      jobTimeoutMs: limits.vlmJobTimeoutMs,
      memoryBytes: limits.vlmWorkerMemoryBytes,
      idleMs: 60_000,
      logger,
    }),
  };
}

/**
 * Starts the service; it owns its database, sockets, sessions, worker pools, child processes and a
 * private temporary directory (synthesised audio) until close().
 */
export async function startService(opts: ServiceOptions = {}): Promise<RunningService> {
  const logger = opts.logger ?? createLogger({ base: { component: 'cloud' } });
  const now = opts.now ?? (() => new Date());
  const limits = { ...DEFAULT_LIMITS, ...opts.limits };
  const db = openDb(opts.dbPath ?? defaultDbPath());
  const accounts = new Accounts(db, now);
  const keys = new ApiKeys(db, now);
  const jwt = new JwtAuthority(opts.jwtSecret ?? loadOrCreateSecret(defaultSecretPath()));
  const closing = new AbortController();
  const tmpDir = mkdtempSync(join(tmpdir(), 'cortexd-cloud-'));
  const ctx: ServiceContext = {
    accounts,
    keys,
    jwt,
    limits,
    backends: opts.backends,
    keyOpsLimiter: new TokenBuckets(opts.keyRateLimit ?? KEY_OPS_RATE_LIMIT),
    logger,
    closing: closing.signal,
    tmpDir,
    pendingAudio: { bytes: 0 },
    openSockets: new Map(),
    pools: poolsFor(limits, logger),
  };
  const releasePools = (): void => {
    const stopping = new Error('the service is stopping');
    ctx.pools.tts.drain(stopping);
    ctx.pools.asr.drain(stopping);
    ctx.pools.vision.close();
    // A file a drained job writes meanwhile must not fail the stop (ENOTEMPTY): retried, then left to the OS.
    try {
      rmSync(tmpDir, { recursive: true, force: true, maxRetries: 3 });
    } catch (err) {
      logger.warn({ err, dir: tmpDir }, 'could not remove the service working directory');
    }
  };
  const app = buildApp(ctx);
  capConnectionsPerPeer(app.server, limits.connectionsPerPeer);
  const sockets = attachSockets(app.server, ctx);
  try {
    await app.listen({ host: opts.host ?? '127.0.0.1', port: opts.port ?? 0 });
  } catch (err) {
    await sockets.close();
    releasePools();
    db.close();
    throw err;
  }
  const port = (app.server.address() as AddressInfo).port;
  const host = opts.host && opts.host !== '0.0.0.0' && opts.host !== '::' ? opts.host : '127.0.0.1';
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const url = `http://${hostPart}:${port}`;
  const wsUrl = `ws://${hostPart}:${port}`;

  const admin = createAdmin(accounts, keys, jwt);

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      closing.abort();
      await sockets.close();
      await app.close();
      releasePools();
      db.close();
    })());

  return { url, wsUrl, asrWsUrl: `${wsUrl}${ASR_SECOND_PATH}`, vlmWsUrl: `${wsUrl}${VLM_PATH}`, port, admin, close };
}
