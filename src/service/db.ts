// Opens the local service's SQLite database (WAL mode) and brings its schema up to date with in-code migrations.
import type Database from 'better-sqlite3';
import { narrowPrivateDb, preparePrivateDb } from './files.js';
import { loadSqlite } from './sqlite.js';

export type Db = Database.Database;

/**
 * Ordered migrations. Index i upgrades schema version i to i+1 (SQLite `user_version`). Each runs in
 * one transaction, so a crash mid-migration leaves the previous version intact. Never edit a shipped
 * migration: append a new one.
 */
const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE users (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    plan TEXT NOT NULL,
    -- All CU amounts are stored in micro-CU (1e-6 CU) so every charge is an exact integer.
    monthly_total_micro INTEGER NOT NULL,
    monthly_unused_micro INTEGER NOT NULL,
    prepaid_micro INTEGER NOT NULL DEFAULT 0,
    current_period_end TEXT,
    cancel_at_period_end INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL
  );
  CREATE TABLE api_keys (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL REFERENCES users(id),
    name TEXT NOT NULL,
    prefix TEXT NOT NULL,
    -- Public lookup part of the key (first characters after the prefix); the rest is secret.
    lookup TEXT NOT NULL UNIQUE,
    -- sha256 of the whole key; the key itself is never stored.
    hash BLOB NOT NULL,
    total_cost_micro INTEGER NOT NULL DEFAULT 0,
    deleted INTEGER NOT NULL DEFAULT 0,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );
  CREATE INDEX api_keys_user ON api_keys(user_id, deleted);
  CREATE TABLE usage (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key_id TEXT NOT NULL REFERENCES api_keys(id),
    user_id TEXT NOT NULL REFERENCES users(id),
    at TEXT NOT NULL,
    -- chat | tts | asr | vlm
    kind TEXT NOT NULL,
    -- provider or vendor and model, for example provider_a/gen-4o or speechlab/tts
    item TEXT NOT NULL,
    -- tokens in/out, characters, or audio bytes (quantity_out is 0 when unused)
    quantity_in INTEGER NOT NULL,
    quantity_out INTEGER NOT NULL DEFAULT 0,
    cost_micro INTEGER NOT NULL
  );
  CREATE INDEX usage_key ON usage(key_id);
  `,
];

/**
 * Opens (creating if needed) the database at `path` (`:memory:` allowed) and migrates it. The file,
 * its -wal and -shm are 0600 and a directory it creates 0700 (files.ts).
 */
export function openDb(path: string): Db {
  preparePrivateDb(path);
  const Sqlite = loadSqlite();
  const db = new Sqlite(path);
  if (path !== ':memory:') db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  narrowPrivateDb(path);
  return db;
}

/** Applies every migration newer than the database's `user_version`. */
export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let v = current; v < MIGRATIONS.length; v++) {
    const sql = MIGRATIONS[v]!;
    db.transaction(() => {
      db.exec(sql);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
}
