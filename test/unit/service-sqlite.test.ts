// Proves the SQLite binding choice: better-sqlite3 13 from Node-API 10 on, 12 (better-sqlite3-node20) below, the one this Node needs opens a database, and a missing one is named with its fix.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDb } from '../../src/service/db.js';
import { loadSqlite, SQLITE_NAPI, SQLITE_NODE20, SqliteMissingError, sqlitePackage } from '../../src/service/sqlite.js';

t.test('Node-API 10 and later load better-sqlite3 13, older ones its 12 alias', async (t) => {
  t.equal(sqlitePackage('9'), SQLITE_NODE20, 'Node 20 and 22.12-22.13');
  t.equal(sqlitePackage('10'), SQLITE_NAPI, 'Node 22.14+, 24');
  t.equal(sqlitePackage('11'), SQLITE_NAPI);
});

t.test('the binding this Node needs is installed, is the right major version and runs the migrations', async (t) => {
  const pkg = sqlitePackage();
  const require = createRequire(import.meta.url);
  const manifest = JSON.parse(readFileSync(require.resolve(`${pkg}/package.json`), 'utf8')) as { name: string; version: string };
  t.equal(manifest.name, 'better-sqlite3');
  t.equal(manifest.version.split('.')[0], pkg === SQLITE_NAPI ? '13' : '12', `${pkg} is better-sqlite3 ${manifest.version} on Node ${process.version}`);
  const db = openDb(':memory:');
  t.teardown(() => db.close());
  t.equal(db.pragma('user_version', { simple: true }), 1, 'schema migrated');
  const insert = db.prepare('INSERT INTO users (id, name, plan, monthly_total_micro, monthly_unused_micro, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  db.transaction(() => {
    for (let i = 0; i < 200; i++) insert.run(`u${i}`, `name${i}`, 'free', 1, 1, 'now');
  })();
  t.equal((db.prepare('SELECT count(*) AS n FROM users').get() as { n: number }).n, 200);
});

t.test('a tree without the binding: a typed error naming the package and the fix, not a require stack', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-sqlite-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'package.json'), '{ "name": "empty", "type": "module" }\n');
  mkdirSync(join(dir, 'node_modules'));
  const from = pathToFileURL(join(dir, 'index.js')).href;
  const pkg = sqlitePackage();
  const err = t.throws(() => loadSqlite(from)) as unknown;
  t.ok(err instanceof SqliteMissingError, 'SqliteMissingError');
  t.match(err, { code: 'sqlite_missing', pkg, message: new RegExp(`^${pkg} .*is not installed`) });
  t.notMatch((err as Error).message, /Require stack/);
  if (pkg === SQLITE_NODE20) t.match((err as Error).message, /run npm ci .*or use Node\.js 22\.14\+/);
});
