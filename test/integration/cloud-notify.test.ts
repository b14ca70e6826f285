// Proves `cortexd cloud` under systemd's Type=notify: READY=1 once it listens, WATCHDOG=1 pings, STOPPING=1 on SIGTERM.
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { NotifyReceiver } from '../helpers/notify-receiver.js';
import { tsLoaderArgs } from '../helpers/ts-loader.js';

const fixture = fileURLToPath(new URL('../fixtures/service/cloud-cli.ts', import.meta.url));

t.test('cortexd cloud reports readiness and keeps the watchdog fed', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cloud-notify-'));
  const receiver = new NotifyReceiver();
  t.teardown(() => {
    receiver.close();
    rmSync(state, { recursive: true, force: true });
  });
  const server = spawn(process.execPath, [...tsLoaderArgs, fixture, 'cloud', '--port', '0'], {
    env: { ...process.env, CORTEX_STATE_DIR: state, CORTEX_LOG_LEVEL: 'warn', STATE_DIRECTORY: '', NOTIFY_SOCKET: receiver.path, WATCHDOG_USEC: '400000' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((r) => server.on('exit', (code) => r(code)));
  let out = '';
  server.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));

  const ready = await receiver.next((m) => m.includes('READY=1'), 30000);
  t.match(ready.text, /STATUS=listening on http:\/\/127\.0\.0\.1:\d+/, 'ready carries the address');
  t.match(out, /^url=http:\/\/127\.0\.0\.1:\d+$/m, 'the address was printed before readiness');
  const first = await receiver.next((m) => m === 'WATCHDOG=1', 5000, ready.index);
  await receiver.next((m) => m === 'WATCHDOG=1', 5000, first.index + 1);
  t.pass('watchdog pings repeat at half of WATCHDOG_USEC');

  server.kill('SIGTERM');
  await receiver.next((m) => m.includes('STOPPING=1'), 5000);
  t.equal(await exited, 0, 'SIGTERM stops it cleanly');
});
