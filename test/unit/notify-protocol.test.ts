// Proves the sd_notify messages reach a real NOTIFY_SOCKET in systemd's format, the watchdog pings and stops, and nothing happens outside systemd.
import t from 'tap';
import { Notifier, formatNotify } from '../../src/systemd/notify.js';
import { Watchdog, watchdogIntervalMs } from '../../src/systemd/watchdog.js';
import { NotifyReceiver } from '../helpers/notify-receiver.js';

t.test('formatNotify writes KEY=value lines and keeps values on one line', async (t) => {
  t.equal(formatNotify({ READY: 1, STATUS: 'mode idle' }), 'READY=1\nSTATUS=mode idle');
  t.equal(formatNotify({ STATUS: 'two\nlines' }), 'STATUS=two lines');
});

t.test('outside systemd every call is a no-op', async (t) => {
  const n = new Notifier({ env: {} });
  t.equal(n.enabled, false);
  t.equal(n.transport, 'none');
  await n.ready('x');
  await n.watchdog();
  const w = new Watchdog(n, { env: { WATCHDOG_USEC: '1000000' } });
  w.start();
  t.equal(w.running, false, 'no watchdog timer without a notify socket');
});

t.test('readiness, status, stopping and reloading arrive as datagrams', async (t) => {
  const rx = new NotifyReceiver();
  t.teardown(() => rx.close());
  const errors: string[] = [];
  const n = new Notifier({ env: { NOTIFY_SOCKET: rx.path }, onError: (m) => errors.push(m) });
  t.teardown(() => n.close());
  t.equal(n.transport, 'dgram');
  await n.ready('mode idle');
  await n.status('tick 3');
  await n.reloading();
  await n.stopping('running on_shutdown hooks');
  await n.extendTimeout(1500);
  await rx.next((m) => m.startsWith('EXTEND_TIMEOUT_USEC='));
  const texts = rx.messages.map((m) => m.text);
  t.equal(texts[0], 'READY=1\nSTATUS=mode idle');
  t.equal(texts[1], 'STATUS=tick 3');
  t.match(texts[2], /^RELOADING=1\nMONOTONIC_USEC=\d+$/);
  t.equal(texts[3], 'STOPPING=1\nSTATUS=running on_shutdown hooks');
  t.equal(texts[4], 'EXTEND_TIMEOUT_USEC=1500000');
  t.same(errors, []);
});

t.test('a missing socket is reported once and never throws', async (t) => {
  const errors: string[] = [];
  const n = new Notifier({ env: { NOTIFY_SOCKET: '/nonexistent/cortexd/notify' }, onError: (m) => errors.push(m) });
  t.teardown(() => n.close());
  await n.ready();
  await n.watchdog();
  t.equal(errors.length, 1);
  t.match(errors[0], /\/nonexistent\/cortexd\/notify/);
});

t.test('watchdogIntervalMs follows sd_watchdog_enabled', async (t) => {
  t.equal(watchdogIntervalMs({}), undefined);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' }), 30000);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: String(process.pid) }), 30000);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '1' }), undefined, 'another process was meant');
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: '0' }), undefined);
  t.equal(watchdogIntervalMs({ WATCHDOG_USEC: 'soon' }), undefined);
});

t.test('the watchdog pings at half the interval and stops when told', async (t) => {
  const rx = new NotifyReceiver();
  t.teardown(() => rx.close());
  const n = new Notifier({ env: { NOTIFY_SOCKET: rx.path } });
  t.teardown(() => n.close());
  const w = new Watchdog(n, { env: { WATCHDOG_USEC: '100000' } });
  t.equal(w.pingIntervalMs, 50);
  w.start();
  t.ok(w.running);
  const isPing = (m: string): boolean => m === 'WATCHDOG=1';
  // Pings keep coming on the timer (its period is pingIntervalMs, checked above). Their gaps are not
  // asserted: a receive time is when this process read the datagram, which a busy core delays.
  const first = await rx.next(isPing);
  await rx.next(isPing, 5000, first.index + 3);
  w.stop();
  t.notOk(w.running);
  const stoppedAt = rx.messages.length;
  await new Promise((r) => setTimeout(r, 200));
  await n.status('marker');
  await rx.next((m) => m === 'STATUS=marker', 5000, stoppedAt);
  const after = rx.messages.slice(stoppedAt).map((m) => m.text);
  t.same(after, ['STATUS=marker'], 'no WATCHDOG=1 after stop()');
});

t.test('an unhealthy runtime skips pings', async (t) => {
  const rx = new NotifyReceiver();
  t.teardown(() => rx.close());
  const n = new Notifier({ env: { NOTIFY_SOCKET: rx.path } });
  t.teardown(() => n.close());
  let healthy = false;
  const w = new Watchdog(n, { intervalMs: 40, healthy: () => healthy });
  w.start();
  t.teardown(() => w.stop());
  await new Promise((r) => setTimeout(r, 150));
  t.ok(w.skippedPings >= 2, `skipped ${w.skippedPings}`);
  t.notOk(
    rx.messages.some((m) => m.text === 'WATCHDOG=1'),
    'no ping while unhealthy',
  );
  healthy = true;
  await rx.next((m) => m === 'WATCHDOG=1');
});
