// Proves, with a real child process and a real NOTIFY_SOCKET, that READY=1 and WATCHDOG=1 arrive at the configured rate and stop while the event loop is blocked.
import t from 'tap';
import { tsLoaderArgs } from '../helpers/ts-loader.js';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { NotifyReceiver } from '../helpers/notify-receiver.js';

const src = (p: string): string => pathToFileURL(join(import.meta.dirname, '../../src/systemd', p)).href;

// The child acts like the run command: READY=1, the watchdog from the environment systemd would
// set, then a synchronous busy loop of BLOCK_MS framed by two status lines, then it idles until killed.
const CHILD = `
import { Notifier } from ${JSON.stringify(src('notify.ts'))};
import { Watchdog } from ${JSON.stringify(src('watchdog.ts'))};
const n = new Notifier({ onError: (m) => { console.error(m); process.exit(3); } });
const w = new Watchdog(n);
await n.ready('child up');
w.start();
process.stdin.once('data', async () => {
  await n.status('blocking');
  const end = Date.now() + Number(process.env.BLOCK_MS);
  while (Date.now() < end) { /* the event loop is stuck here */ }
  await n.status('unblocked');
});
process.stdin.resume();
`;

t.test('READY=1, pings every WATCHDOG_USEC/2, none while the loop is blocked', async (t) => {
  const rx = new NotifyReceiver();
  t.teardown(() => rx.close());
  const script = join(rx.dir, 'child.mts');
  writeFileSync(script, CHILD);
  const intervalMs = 200; // WatchdogSec=0.2 s: pings every 100 ms
  const blockMs = 1000;
  const child = spawn(process.execPath, [...tsLoaderArgs, script], {
    env: {
      ...process.env,
      NOTIFY_SOCKET: rx.path,
      WATCHDOG_USEC: String(intervalMs * 1000),
      BLOCK_MS: String(blockMs),
      NODE_OPTIONS: '',
    },
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  // WATCHDOG_PID is not set here on purpose: systemd sets it only when it is the main PID; the
  // child must ping when it is absent.
  const ready = await rx.next((m) => m.startsWith('READY=1'), 20000);
  t.equal(ready.text, 'READY=1\nSTATUS=child up');

  const isPing = (m: string): boolean => m === 'WATCHDOG=1';
  const p0 = await rx.next(isPing, 5000, ready.index);
  const p5 = await rx.next(isPing, 5000, p0.index + 5);
  const pings = rx.messages.slice(p0.index, p5.index + 1).filter((m) => isPing(m.text));
  t.equal(pings.length, 6);
  const gaps = pings.slice(1).map((m, i) => m.at - pings[i]!.at);
  const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
  // At the configured rate, not a multiple of it: the mean is measured where the pings arrive, so a
  // first ping received late on a loaded machine shortens it (93 ms seen for a 100 ms period); a
  // sender pinging at twice the rate would give 50. On average inside the interval, or systemd
  // would kill the service.
  t.ok(mean > intervalMs / 3, `mean gap ${mean.toFixed(1)} ms, about every ${intervalMs / 2} ms`);
  t.ok(mean < intervalMs, `mean gap ${mean.toFixed(1)} ms < WatchdogSec ${intervalMs} ms`);

  child.stdin.write('block\n');
  const start = await rx.next((m) => m === 'STATUS=blocking', 5000, p5.index);
  const end = await rx.next((m) => m === 'STATUS=unblocked', blockMs + 10000, start.index);
  const during = rx.messages.slice(start.index + 1, end.index).filter((m) => isPing(m.text));
  t.equal(during.length, 0, 'no WATCHDOG=1 while the event loop was blocked');
  const before = rx.messages
    .slice(0, start.index)
    .filter((m) => isPing(m.text))
    .at(-1)!;
  const after = await rx.next(isPing, 5000, end.index);
  t.ok(
    after.at - before.at >= blockMs - 50,
    `the ping gap around the block (${Math.round(after.at - before.at)} ms) exceeds WatchdogSec (${intervalMs} ms): systemd would restart`,
  );
});

t.test('a child that inherited WATCHDOG_PID of another process does not ping', async (t) => {
  const rx = new NotifyReceiver();
  t.teardown(() => rx.close());
  const script = join(rx.dir, 'child.mts');
  writeFileSync(script, CHILD);
  const child = spawn(process.execPath, [...tsLoaderArgs, script], {
    env: { ...process.env, NOTIFY_SOCKET: rx.path, WATCHDOG_USEC: '100000', WATCHDOG_PID: String(process.pid), NODE_OPTIONS: '' },
    stdio: ['pipe', 'inherit', 'inherit'],
  });
  t.teardown(() => {
    child.kill('SIGKILL');
  });
  const ready = await rx.next((m) => m.startsWith('READY=1'), 20000);
  await new Promise((r) => setTimeout(r, 300));
  child.stdin.write('go\n');
  await rx.next((m) => m === 'STATUS=unblocked', 10000, ready.index);
  t.notOk(
    rx.messages.some((m) => m.text === 'WATCHDOG=1'),
    'no ping for a watchdog meant for another PID',
  );
});

t.test('notifying and a running watchdog never keep a finished process alive', async (t) => {
  const rx = new NotifyReceiver();
  t.teardown(() => rx.close());
  const script = join(rx.dir, 'exit.mts');
  writeFileSync(
    script,
    `import { Notifier } from ${JSON.stringify(src('notify.ts'))};
import { Watchdog } from ${JSON.stringify(src('watchdog.ts'))};
const n = new Notifier();
new Watchdog(n).start();
await n.ready();
`,
  );
  const child = spawn(process.execPath, [...tsLoaderArgs, script], {
    env: { ...process.env, NOTIFY_SOCKET: rx.path, WATCHDOG_USEC: '60000000', NODE_OPTIONS: '' },
    stdio: 'inherit',
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), 20000);
  const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.once('exit', (c, s) => r([c, s])));
  clearTimeout(killer);
  t.same([code, signal], [0, null], 'exited by itself');
  t.ok(rx.messages.some((m) => m.text === 'READY=1'));
});
