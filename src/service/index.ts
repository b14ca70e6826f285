// Entry point of the local hosted-API service: startService() builds stores, routes and sockets, listens, and returns its addresses, admin handle and close().
import type { AddressInfo } from 'node:net';
import type { ApiKeyRecord, BalanceRecord } from '../cloud/protocol.js';
import { createLogger } from '../log.js';
import { Accounts, planKeyLimit as planLimit, type User } from './accounts.js';
import { buildApp } from './app.js';
import { JwtAuthority, loadOrCreateSecret } from './auth.js';
import type { ServiceContext } from './context.js';
import { openDb } from './db.js';
import { ApiKeys, type KeyPrefix } from './keys.js';
import { DEFAULT_LIMITS, KEY_OPS_RATE_LIMIT, defaultDbPath, defaultSecretPath, type ServiceOptions } from './options.js';
import { TokenBuckets } from './ratelimit.js';
import { attachSockets, ASR_SECOND_PATH, VLM_PATH } from './sockets.js';

export type { ServiceOptions, ServiceLimits, BackendOptions, ChatBackendConfig, TtsBackendConfig } from './options.js';
export type { User } from './accounts.js';
export { ASR_SECOND_PATH, VLM_PATH } from './sockets.js';

export interface ServiceAdmin {
  /** Creates a user (or returns the existing one of that name). Plans: free, starter (default), pro, enterprise. */
  createUser(name: string, plan?: string): User;
  /** A JWT for the account endpoints, signed by the service's secret; creates the user if needed. */
  issueJwt(userName: string, ttlSeconds?: number): Promise<string>;
  /** Creates an API key for the user (created if needed); subject to the plan's key limit. */
  createApiKey(userName: string, prefix?: KeyPrefix): { apiKey: string; info: ApiKeyRecord };
  /** Sets credits in whole CU; fields left out stay unchanged. */
  setCredits(userName: string, credits: { prepaid?: number; monthlyUnused?: number; monthlyTotal?: number }): void;
  setPlan(userName: string, plan: string): void;
  balance(userName: string): BalanceRecord;
  /** A key record by id, including deleted keys. */
  keyInfo(keyId: string): ApiKeyRecord | undefined;
  /** The usage ledger of a key, oldest first; `cost_micro` in 1e-6 CU. */
  usage(keyId: string): ReturnType<Accounts['usage']>;
}

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

/** Starts the service; it owns its database, sockets, sessions and child processes until close(). */
export async function startService(opts: ServiceOptions = {}): Promise<RunningService> {
  const logger = opts.logger ?? createLogger({ base: { component: 'cloud' } });
  const now = opts.now ?? (() => new Date());
  const db = openDb(opts.dbPath ?? defaultDbPath());
  const accounts = new Accounts(db, now);
  const keys = new ApiKeys(db, now);
  const jwt = new JwtAuthority(opts.jwtSecret ?? loadOrCreateSecret(defaultSecretPath()));
  const closing = new AbortController();
  const ctx: ServiceContext = {
    accounts,
    keys,
    jwt,
    limits: { ...DEFAULT_LIMITS, ...opts.limits },
    backends: opts.backends,
    keyOpsLimiter: new TokenBuckets(opts.keyRateLimit ?? KEY_OPS_RATE_LIMIT),
    logger,
    closing: closing.signal,
  };
  const app = buildApp(ctx);
  const sockets = attachSockets(app.server, ctx);
  try {
    await app.listen({ host: opts.host ?? '127.0.0.1', port: opts.port ?? 0 });
  } catch (err) {
    await sockets.close();
    db.close();
    throw err;
  }
  const port = (app.server.address() as AddressInfo).port;
  const host = opts.host && opts.host !== '0.0.0.0' && opts.host !== '::' ? opts.host : '127.0.0.1';
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const url = `http://${hostPart}:${port}`;
  const wsUrl = `ws://${hostPart}:${port}`;

  const userNamed = (name: string): User => {
    const u = accounts.userByName(name);
    if (!u) throw new Error(`no user named ${name}`);
    return u;
  };
  const admin: ServiceAdmin = {
    createUser: (name, plan) => accounts.createUser(name, plan),
    issueJwt: (name, ttl) => jwt.issue(accounts.userByName(name) ?? accounts.createUser(name), ttl),
    createApiKey: (name, prefix) => {
      const u = accounts.userByName(name) ?? accounts.createUser(name);
      return keys.create(u.id, { plan: u.plan, limit: planLimit(u.plan), prefix });
    },
    setCredits: (name, credits) => accounts.setCredits(userNamed(name).id, credits),
    setPlan: (name, plan) => accounts.setPlan(userNamed(name).id, plan),
    balance: (name) => accounts.balance(userNamed(name).id)!,
    keyInfo: (id) => keys.get(id),
    usage: (id) => accounts.usage(id),
  };

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      closing.abort();
      await sockets.close();
      await app.close();
      db.close();
    })());

  return { url, wsUrl, asrWsUrl: `${wsUrl}${ASR_SECOND_PATH}`, vlmWsUrl: `${wsUrl}${VLM_PATH}`, port, admin, close };
}
