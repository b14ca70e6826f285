// Administration of the local service's accounts without HTTP: users, plans, credits, keys, JWTs (the CLI, embedding and tests).
import type { ApiKeyRecord, BalanceRecord } from '../cloud/protocol.js';
import { Accounts, planKeyLimit, type User } from './accounts.js';
import { JwtAuthority, loadOrCreateSecret } from './auth.js';
import { openDb } from './db.js';
import { ApiKeys, type KeyPrefix } from './keys.js';
import { defaultDbPath, defaultSecretPath } from './options.js';

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
  /**
   * Deletes every active key of the user (created if needed, with `plan`) and creates one new key:
   * what an embedding runtime calls at each start, since a key's secret cannot be read back later.
   */
  rotateApiKey(userName: string, plan?: string): { apiKey: string; info: ApiKeyRecord };
  balance(userName: string): BalanceRecord;
  /** A key record by id, including deleted keys. */
  keyInfo(keyId: string): ApiKeyRecord | undefined;
  /** The usage ledger of a key, oldest first; `cost_micro` in 1e-6 CU. */
  usage(keyId: string): ReturnType<Accounts['usage']>;
}

export function createAdmin(accounts: Accounts, keys: ApiKeys, jwt: JwtAuthority): ServiceAdmin {
  const userNamed = (name: string): User => {
    const u = accounts.userByName(name);
    if (!u) throw new Error(`no user named ${name}`);
    return u;
  };
  return {
    createUser: (name, plan) => accounts.createUser(name, plan),
    issueJwt: (name, ttl) => jwt.issue(accounts.userByName(name) ?? accounts.createUser(name), ttl),
    createApiKey: (name, prefix) => {
      const u = accounts.userByName(name) ?? accounts.createUser(name);
      return keys.create(u.id, { plan: u.plan, limit: planKeyLimit(u.plan), prefix });
    },
    setCredits: (name, credits) => accounts.setCredits(userNamed(name).id, credits),
    setPlan: (name, plan) => accounts.setPlan(userNamed(name).id, plan),
    rotateApiKey: (name, plan) => {
      const u = accounts.userByName(name) ?? accounts.createUser(name, plan);
      for (const k of keys.list(u.id)) keys.delete(u.id, k.id);
      return keys.create(u.id, { plan: u.plan, limit: planKeyLimit(u.plan) });
    },
    balance: (name) => accounts.balance(userNamed(name).id)!,
    keyInfo: (id) => keys.get(id),
    usage: (id) => accounts.usage(id),
  };
}

/**
 * Opens the service's database and secret directly (no server), for `cortexd cloud token` and
 * `cortexd cloud key`. SQLite's WAL mode and busy timeout make this safe while the server runs.
 */
export function openAdmin(opts: { dbPath?: string; jwtSecret?: string } = {}): { admin: ServiceAdmin; close(): void } {
  const db = openDb(opts.dbPath ?? defaultDbPath());
  const admin = createAdmin(new Accounts(db), new ApiKeys(db), new JwtAuthority(opts.jwtSecret ?? loadOrCreateSecret(defaultSecretPath())));
  return { admin, close: () => db.close() };
}
