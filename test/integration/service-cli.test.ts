// Proves `cortexd cloud`: runs in the foreground and prints its addresses, `cloud token`/`cloud key` issue working credentials, SIGTERM stops it.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { tsLoaderArgs } from '../helpers/ts-loader.js';

const fixture = fileURLToPath(new URL('../fixtures/service/cloud-cli.ts', import.meta.url));

t.test('cortexd cloud, token and key', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'svc-cli-'));
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  const env = { ...process.env, CORTEX_STATE_DIR: state, CORTEX_LOG_LEVEL: 'warn', STATE_DIRECTORY: '' };
  const run = (...args: string[]) => spawnSync(process.execPath, [...tsLoaderArgs, fixture, ...args], { env, encoding: 'utf8' });

  const token = run('cloud', 'token', '--user', 'owner', '--plan', 'pro');
  t.equal(token.status, 0, token.stderr);
  t.match(token.stdout, /^eyJ[\w-]+\.[\w-]+\.[\w-]+\n$/);
  t.equal(statSync(join(state, 'cloud-jwt.secret')).mode & 0o777, 0o600, 'secret file is private');
  const key = run('cloud', 'key', '--user', 'owner');
  t.match(key.stdout, /^key_live_\S+\n$/);
  t.match(run('cloud', 'token', '--user', 'x', '--plan', 'gold'), { status: 1, stderr: /--plan must be one of free, starter, pro, enterprise/ });

  const server = spawn(process.execPath, [...tsLoaderArgs, fixture, 'cloud', '--port', '0'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<number | null>((r) => server.on('exit', (code) => r(code)));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no address printed: ${out}`)), 30000);
    server.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /vlm_ws_url=\S+\n/.test(out) && /^url=(\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
  });
  t.match(
    out,
    /^url=http:\/\/127\.0\.0\.1:\d+\nws_url=ws:\/\/127\.0\.0\.1:\d+\nasr_ws_url=ws:\/\/127\.0\.0\.1:\d+\/asr\nvlm_ws_url=ws:\/\/127\.0\.0\.1:\d+\/vlm\n$/,
  );
  const balance = await fetch(`${url}/api/core/account/balance`, { headers: { authorization: `Bearer ${token.stdout.trim()}` } });
  t.match(await balance.json(), { plan: 'pro', monthly_total_cu: 1_000_000 });
  const keys = await fetch(`${url}/api/core/api_keys`, { headers: { authorization: `Bearer ${token.stdout.trim()}` } });
  t.equal(((await keys.json()) as { api_keys: unknown[] }).api_keys.length, 1, 'the key made by `cloud key`');
  const chat = await fetch(`${url}/api/core/provider_a/chat/completions`, {
    method: 'POST',
    headers: { 'x-api-key': key.stdout.trim(), 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gen-5', messages: [{ role: 'user', content: 'hi' }] }),
  });
  t.equal(chat.status, 200);
  server.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM stops it cleanly');
});
