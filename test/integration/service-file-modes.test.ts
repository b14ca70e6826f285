// Proves `cortexd cloud` keeps its state private (directory 0700; database, -wal, -shm and JWT secret 0600) and doctor warns when they are wider.
import t, { type Test } from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadSqlite } from '../../src/service/sqlite.js';
import { checkStateDir } from '../../src/doctor/system.js';
import { tsLoaderArgs } from '../helpers/ts-loader.js';

const fixture = fileURLToPath(new URL('../fixtures/service/cloud-cli.ts', import.meta.url));
const mode = (path: string): string => `0${(statSync(path).mode & 0o777).toString(8)}`;

/** `node <args>` under umask 000: files created without an explicit mode would be world-writable. */
const openUmask = (args: string[]): [string, string[]] => ['sh', ['-c', 'umask 000 && exec "$0" "$@"', process.execPath, ...tsLoaderArgs, fixture, ...args]];

/** Runs `cortexd cloud` on `state` until it has answered one metered chat (so the WAL holds data), then stops it. */
async function serveOnce(t: Test, state: string): Promise<void> {
  const env = { ...process.env, CORTEX_STATE_DIR: state, CORTEX_LOG_LEVEL: 'warn', STATE_DIRECTORY: '' };
  const key = spawnSync(...openUmask(['cloud', 'key', '--user', 'owner']), { env, encoding: 'utf8' });
  t.equal(key.status, 0, key.stderr);
  const server = spawn(...openUmask(['cloud', '--port', '0']), { env, stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((r) => server.on('exit', (code) => r(code)));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address printed: ${out}`)), 30_000);
    server.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /vlm_ws_url=\S+\n/.test(out) && /^url=(\S+)$/m.exec(out);
      if (m) clearTimeout(timer), resolve(m[1]!);
    });
  });
  const chat = await fetch(`${url}/api/core/provider_a/chat/completions`, {
    method: 'POST',
    headers: { 'x-api-key': key.stdout.trim(), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gen-5', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(chat.status, 200);
  // While it runs: the WAL and shared-memory files exist and are private too.
  t.equal(mode(join(state, 'cloud.sqlite-wal')), '0600', 'cloud.sqlite-wal while serving');
  t.equal(mode(join(state, 'cloud.sqlite-shm')), '0600', 'cloud.sqlite-shm while serving');
  server.kill('SIGTERM');
  t.equal(await exited, 0);
}

t.test('a fresh state directory: 0700, database files and secret 0600, even under umask 000', async (t) => {
  const root = mkdtempSync(join(tmpdir(), 'svc-modes-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const state = join(root, 'state', 'cortexd');
  await serveOnce(t, state);
  t.equal(mode(state), '0700', 'state directory');
  t.equal(mode(join(state, 'cloud.sqlite')), '0600', 'cloud.sqlite');
  t.equal(mode(join(state, 'cloud-jwt.secret')), '0600', 'cloud-jwt.secret');
  t.match(checkStateDir(state), { status: 'ok' }, 'doctor is content');
});

t.test('state left world-readable by an earlier run: doctor warns; the service narrows it', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'svc-modes-old-'));
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  chmodSync(state, 0o755);
  const Database = loadSqlite();
  const db = new Database(join(state, 'cloud.sqlite'));
  db.pragma('journal_mode = WAL');
  db.close();
  chmodSync(join(state, 'cloud.sqlite'), 0o644);
  writeFileSync(join(state, 'cloud-jwt.secret'), `${'s'.repeat(64)}\n`);
  chmodSync(join(state, 'cloud-jwt.secret'), 0o644);

  const before = checkStateDir(state);
  t.equal(before.status, 'warn');
  t.equal(before.detail, `${state} is writable, but readable by others: ${state} is 0755, cloud.sqlite is 0644, cloud-jwt.secret is 0644`);
  t.match(before.fix, /^chmod 700 .*; chmod 600 /);

  await serveOnce(t, state);
  for (const f of ['cloud.sqlite', 'cloud-jwt.secret']) t.equal(mode(join(state, f)), '0600', f);
  t.equal(mode(state), '0700');
  t.match(checkStateDir(state), { status: 'ok' });
});
