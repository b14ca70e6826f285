// API keys of the local service: creation (secret shown once), hashed storage, listing, deletion, constant-time verification.
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { KEY_PREFIXES } from '../cloud/catalog.js';
import type { ApiKeyRecord } from '../cloud/protocol.js';
import type { Db } from './db.js';
import { microToCostCu } from './metering.js';

export type KeyPrefix = (typeof KEY_PREFIXES)[number];

/**
 * Key format: `<prefix><lookup><secret>`: prefix `key_live_` or `key_test_`, a 12-character public
 * lookup id (base64url) and a 32-character secret (base64url, 192 bits). Only sha256 of the whole key
 * is stored. Verification finds the row by its lookup id, then compares hashes with
 * crypto.timingSafeEqual; an unknown lookup id still costs one comparison against a dummy hash.
 */
const LOOKUP_LEN = 12;
const SECRET_LEN = 32;
const DUMMY_HASH = createHash('sha256').update('cortexd-no-such-key').digest();

interface KeyRow {
  id: string;
  user_id: string;
  name: string;
  prefix: KeyPrefix;
  lookup: string;
  hash: Buffer;
  total_cost_micro: number;
  deleted: number;
  created_at: string;
  updated_at: string;
}

export interface VerifiedKey {
  keyId: string;
  userId: string;
  prefix: KeyPrefix;
}

export type KeyCheck = { ok: true; key: VerifiedKey } | { ok: false; details: string };

function hashKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    user_id: row.user_id,
    name: row.name,
    prefix: row.prefix,
    total_cost: microToCostCu(row.total_cost_micro),
    deleted: row.deleted === 1,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export class KeyLimitError extends Error {
  constructor(
    readonly plan: string,
    readonly limit: number,
  ) {
    super(`API key limit reached: the ${plan} plan allows ${limit} API keys. Delete an existing key or upgrade your plan to create more.`);
  }
}

export class ApiKeys {
  constructor(
    private readonly db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /**
   * Creates a key for `userId` unless the user already has `limit` active keys (KeyLimitError).
   * The count and the insert run in one transaction, so concurrent creations cannot pass the limit.
   */
  create(userId: string, opts: { plan: string; limit: number; prefix?: KeyPrefix }): { apiKey: string; info: ApiKeyRecord } {
    const prefix = opts.prefix ?? 'key_live_';
    const tx = this.db.transaction(() => {
      const { n } = this.db.prepare(`SELECT COUNT(*) AS n FROM api_keys WHERE user_id = ? AND deleted = 0`).get(userId) as {
        n: number;
      };
      if (n >= opts.limit) throw new KeyLimitError(opts.plan, opts.limit);
      let lookup: string;
      do lookup = randomBytes(9).toString('base64url');
      while (this.db.prepare(`SELECT 1 FROM api_keys WHERE lookup = ?`).get(lookup));
      const secret = randomBytes(24).toString('base64url');
      const apiKey = `${prefix}${lookup}${secret}`;
      const at = this.now();
      const row: KeyRow = {
        id: randomUUID(),
        user_id: userId,
        name: `api-key-${at.getTime()}`,
        prefix,
        lookup,
        hash: hashKey(apiKey),
        total_cost_micro: 0,
        deleted: 0,
        created_at: at.toISOString(),
        updated_at: at.toISOString(),
      };
      this.db
        .prepare(
          `INSERT INTO api_keys (id, user_id, name, prefix, lookup, hash, total_cost_micro, deleted, created_at, updated_at)
           VALUES (@id, @user_id, @name, @prefix, @lookup, @hash, 0, 0, @created_at, @updated_at)`,
        )
        .run(row);
      return { apiKey, info: toRecord(row) };
    });
    return tx();
  }

  /** Active keys of a user, oldest first; never the secret or the hash. */
  list(userId: string): ApiKeyRecord[] {
    const rows = this.db.prepare(`SELECT * FROM api_keys WHERE user_id = ? AND deleted = 0 ORDER BY created_at, rowid`).all(userId) as KeyRow[];
    return rows.map(toRecord);
  }

  /** Any key record by id, deleted or not (administration and tests). */
  get(keyId: string): ApiKeyRecord | undefined {
    const row = this.db.prepare(`SELECT * FROM api_keys WHERE id = ?`).get(keyId) as KeyRow | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Marks the caller's active key deleted; false when it does not exist, is deleted or is someone else's. */
  delete(userId: string, keyId: string): boolean {
    const res = this.db
      .prepare(`UPDATE api_keys SET deleted = 1, updated_at = ? WHERE id = ? AND user_id = ? AND deleted = 0`)
      .run(this.now().toISOString(), keyId, userId);
    return res.changes === 1;
  }

  /** Verifies a presented key. Deleted keys fail at once: every check reads the database. */
  verify(presented: string): KeyCheck {
    const prefix = KEY_PREFIXES.find((p) => presented.startsWith(p));
    if (!prefix) return { ok: false, details: 'key must start with key_live_ or key_test_' };
    if (presented.length !== prefix.length + LOOKUP_LEN + SECRET_LEN) {
      timingSafeEqual(DUMMY_HASH, hashKey(presented));
      return { ok: false, details: 'malformed key' };
    }
    const lookup = presented.slice(prefix.length, prefix.length + LOOKUP_LEN);
    const row = this.db.prepare(`SELECT id, user_id, prefix, hash FROM api_keys WHERE lookup = ? AND deleted = 0`).get(lookup) as
      | Pick<KeyRow, 'id' | 'user_id' | 'prefix' | 'hash'>
      | undefined;
    const equal = timingSafeEqual(row?.hash ?? DUMMY_HASH, hashKey(presented));
    if (!row || !equal || row.prefix !== prefix) return { ok: false, details: 'key not recognised' };
    return { ok: true, key: { keyId: row.id, userId: row.user_id, prefix: row.prefix } };
  }
}
