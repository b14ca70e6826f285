// Picks the SQLite binding this Node.js can load: better-sqlite3 13 on Node-API 10, else better-sqlite3 12 installed as better-sqlite3-node20
// Node-API 10 is Node 22.14+, 24 and 26; Node 20 and 22.12-22.13 have Node-API 9.
//
// Why two: better-sqlite3 13 keeps references to strings, which Node-API allows only from version 10;
// Node 20 has 9, where 13's prebuilt binary crashes the process at the first `new Database()` (SIGSEGV,
// no message) and a build from source at Node-API 9 aborts while loading. better-sqlite3 12 (V8 API)
// runs on Node 20 but aborts on Node 24 (`Assertion failed: (env) != nullptr` when the garbage collector
// frees a statement: Node 24's ObjectWrap). Drop better-sqlite3-node20 when Node 20 support ends.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';
import { CortexError } from '../errors.js';

export type SqliteConstructor = typeof BetterSqlite3;

/** The better-sqlite3 13 package (Node-API 10). */
export const SQLITE_NAPI = 'better-sqlite3';
/** better-sqlite3 12 under an npm alias (package.json dependencies), for Node-API 9. */
export const SQLITE_NODE20 = 'better-sqlite3-node20';

/** The Node-API version better-sqlite3 13 needs. */
const NAPI_NEEDED = 10;

/** The package name to load on a Node.js whose `process.versions.napi` is `napi`. */
export function sqlitePackage(napi: string | undefined = process.versions.napi): string {
  return Number(napi) >= NAPI_NEEDED ? SQLITE_NAPI : SQLITE_NODE20;
}

/** Thrown when the binding this Node.js needs is not installed. */
export class SqliteMissingError extends CortexError {
  readonly pkg: string;
  constructor(pkg: string, cause: unknown) {
    const why =
      pkg === SQLITE_NODE20
        ? `${pkg} (better-sqlite3 12, for Node.js ${process.versions.node}, whose Node-API ${process.versions.napi} is older than the ${NAPI_NEEDED} better-sqlite3 13 needs) is not installed: run npm ci (or bash scripts/setup.sh), or use Node.js 22.14+ (24 LTS)`
        : `${pkg} is not installed: run npm ci (or bash scripts/setup.sh)`;
    super('sqlite_missing', why, { cause });
    this.name = 'SqliteMissingError';
    this.pkg = pkg;
  }
}

/**
 * The better-sqlite3 constructor for this Node.js, resolved as a module at `from` would (default: this
 * file). Loading the package does not load its binary yet: that happens at the first `new Database()`.
 */
export function loadSqlite(from: string = import.meta.url): SqliteConstructor {
  const pkg = sqlitePackage();
  const require = createRequire(from);
  try {
    return require(pkg) as SqliteConstructor;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && String((err as Error).message).includes(`'${pkg}'`)) {
      throw new SqliteMissingError(pkg, err);
    }
    throw err;
  }
}
