// Private files of the local service: the state directory 0700, the database with its -wal/-shm/-journal and the JWT secret 0600.
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { stateDir } from '../paths.js';

/** Modes of what the service keeps: users, balances, the ledger and key hashes are nobody else's business. */
export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** Files SQLite keeps beside a database. */
export const SQLITE_SIDE_FILES = ['-wal', '-shm', '-journal'] as const;

/** Narrows `path` to `mode` when it exists, is ours and is wider; never widens. */
export function narrowMode(path: string, mode: number): void {
  try {
    const st = statSync(path);
    if (typeof process.getuid === 'function' && st.uid !== process.getuid()) return;
    if ((st.mode & 0o777 & ~mode) !== 0) chmodSync(path, st.mode & 0o777 & mode);
  } catch {
    // Missing or not ours to change: SQLite or the caller reports real problems.
  }
}

/**
 * Makes the directory of a file private: created 0700 when missing; an existing one is narrowed to
 * 0700 only when it is the state directory (a directory named with --db may be shared on purpose).
 */
export function ensurePrivateDir(dir: string): void {
  const existed = existsSync(dir);
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (!existed || resolve(dir) === resolve(stateDir())) narrowMode(dir, PRIVATE_DIR_MODE);
}

/**
 * Prepares a database path before SQLite opens it: private directory, and the file created 0600 so
 * that SQLite, which gives -wal and -shm the database's own mode, creates them 0600 too. Files left
 * wider by an earlier run are narrowed.
 */
export function preparePrivateDb(path: string): void {
  if (path === ':memory:' || path === '') return;
  ensurePrivateDir(dirname(path));
  closeSync(openSync(path, 'a', PRIVATE_FILE_MODE));
  narrowPrivateDb(path);
}

/** Narrows the database and its side files to 0600 (after opening, once WAL made its files). */
export function narrowPrivateDb(path: string): void {
  if (path === ':memory:' || path === '') return;
  narrowMode(path, PRIVATE_FILE_MODE);
  for (const suffix of SQLITE_SIDE_FILES) narrowMode(`${path}${suffix}`, PRIVATE_FILE_MODE);
}
