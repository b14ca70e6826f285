// Opens the SQLite files of memory and knowledge: private (0600), FTS5 checked, and a corrupt or locked file replaced rather than crashing.
import { chmodSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { describeError } from '../errors.js';
import { loadSqlite } from '../service/sqlite.js';

export type Db = BetterSqlite3.Database;

/** How long a statement waits for another process's lock before the file counts as locked. */
const BUSY_MS = 1500;

/** What to do with a file that cannot be used: `rebuild` (derived data: remove it) or `keep` (moved aside, for a person to look at). */
export type OnBadFile = 'rebuild' | 'keep';

export interface OpenedDb {
  db: Db;
  /** Set when the file on disk could not be used: what happened to it (for a warning). */
  recovered?: string;
  /** True when the database lives in memory only (the file and its replacement both failed). */
  inMemory: boolean;
}

const SIDE_FILES = ['-wal', '-shm', '-journal'];

function openFile(file: string, setup: (db: Db) => void): Db {
  const Database = loadSqlite();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file, { timeout: BUSY_MS });
  try {
    chmodSync(file, 0o600);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // A row deleted (a forgotten memory) is overwritten with zeros, not left in a free page.
    db.pragma('secure_delete = ON');
    setup(db);
    // Reads the schema and a page of each table: a file that is not a database, or truncated, fails here.
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`integrity check: ${String(check)}`);
    for (const side of SIDE_FILES) if (existsSync(file + side)) chmodSync(file + side, 0o600);
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

/**
 * Opens `file` and runs `setup` (CREATE ... IF NOT EXISTS). A file that is corrupt, not a database, or
 * locked by another process past BUSY_MS is removed (`rebuild`) or renamed `<file>.bad-<time>` (`keep`)
 * and a new one made; if that fails too the database lives in memory for this run. Never throws for
 * the file's state (a missing SQLite binding still throws: nothing works without it).
 */
export function openDb(file: string, setup: (db: Db) => void, onBad: OnBadFile): OpenedDb {
  try {
    return { db: openFile(file, setup), inMemory: false };
  } catch (err) {
    if ((err as { name?: string }).name === 'SqliteMissingError') throw err;
    const why = describeError(err);
    try {
      if (onBad === 'keep') {
        const aside = `${file}.bad-${new Date().toISOString().replace(/[:.]/g, '-')}`;
        if (existsSync(file)) renameSync(file, aside);
        for (const side of SIDE_FILES) rmSync(file + side, { force: true });
        return { db: openFile(file, setup), inMemory: false, recovered: `${file} could not be used (${why}); moved to ${aside}, starting a new one` };
      }
      for (const f of [file, ...SIDE_FILES.map((s) => file + s)]) rmSync(f, { force: true });
      return { db: openFile(file, setup), inMemory: false, recovered: `${file} could not be used (${why}); rebuilt` };
    } catch (again) {
      const Database = loadSqlite();
      const db = new Database(':memory:');
      setup(db);
      return { db, inMemory: true, recovered: `${file} could not be used (${why}; then ${describeError(again)}); kept in memory for this run` };
    }
  }
}
