// Proves serial lines are read from serialport's mock binding while a session holds the port, the session reopens it after it closes, one open port serves every session, and NMEA is parsed and checked.
import t from 'tap';
import { SerialPortMock } from 'serialport';
import { filter, firstValueFrom, take, toArray, lastValueFrom } from 'rxjs';
import { createSerialLine } from '../../devices/serial.js';
import { heldSerialLines } from '../helpers/held-serial-lines.js';
import type { SessionStateEvent } from '../../actors/streams/session-machine.js';
import { parseNmea, formatNmea, nmeaCoordinate } from '../../devices/nmea.js';
import { waitFor } from '../helpers/wait.js';

/** The mock binding behind a port opened by the `mock` binding. */
const mock = (port: unknown) => (port as SerialPortMock).port!;

t.test('reads CRLF and LF lines, and writes', async (t) => {
  SerialPortMock.binding.createPort('/dev/MOCK0', { record: true });
  const serial = createSerialLine({ binding: 'mock', path: '/dev/MOCK0' });
  const got = lastValueFrom(heldSerialLines(serial).pipe(take(3), toArray()));
  const port = await waitFor(() => serial.port());
  mock(port).emitData('hello\r\nwor');
  mock(port).emitData('ld\nthird\n');
  t.same(await got, ['hello', 'world', 'third']);
  await t.rejects(serial.write('x'), { name: 'DeviceError', code: 'serial_closed' }, 'closed after unsubscribe');
  t.teardown(() => SerialPortMock.binding.reset());
});

t.test('after the port closes underneath, it is reopened and reading resumes', async (t) => {
  SerialPortMock.binding.createPort('/dev/MOCK1');
  const serial = createSerialLine({ binding: 'mock', path: '/dev/MOCK1', reopen_initial_ms: 5, reopen_max_ms: 10 });
  const failures: string[] = [];
  serial.failures$.subscribe((e) => failures.push(e.code));
  const lines: string[] = [];
  const sub = heldSerialLines(serial).subscribe((l) => lines.push(l));
  const first = await waitFor(() => serial.port());
  mock(first).emitData('before\n');
  await waitFor(() => (lines.length === 1 ? true : undefined));
  first.close();
  const second = await waitFor(() => (serial.port() && serial.port() !== first ? serial.port() : undefined));
  mock(second).emitData('after\n');
  await waitFor(() => (lines.length === 2 ? true : undefined));
  t.same(lines, ['before', 'after']);
  t.same(failures, ['serial_closed']);
  await serial.write('ping\n');
  t.equal(mock(second).lastWrite?.toString(), 'ping\n');
  sub.unsubscribe();
  t.teardown(() => SerialPortMock.binding.reset());
});

t.test('a path that does not exist is retried until it appears', async (t) => {
  const serial = createSerialLine({ binding: 'mock', path: '/dev/LATER', reopen_initial_ms: 5, reopen_max_ms: 5 });
  const failures: string[] = [];
  serial.failures$.subscribe((e) => failures.push(e.message));
  const line = firstValueFrom(heldSerialLines(serial));
  await waitFor(() => (failures.length >= 2 ? true : undefined));
  SerialPortMock.binding.createPort('/dev/LATER');
  const port = await waitFor(() => serial.port());
  mock(port).emitData('finally\n');
  t.equal(await line, 'finally');
  t.match(failures[0], /cannot open \/dev\/LATER/);
  t.teardown(() => SerialPortMock.binding.reset());
});

t.test('one open port serves every session holding it; the last to let go closes it', async (t) => {
  SerialPortMock.binding.createPort('/dev/MOCKSHARED');
  t.teardown(() => SerialPortMock.binding.reset());
  const serial = createSerialLine({ binding: 'mock', path: '/dev/MOCKSHARED', reopen_initial_ms: 5, reopen_max_ms: 10 });
  const failures: string[] = [];
  serial.failures$.subscribe((e) => failures.push(e.message));
  const a: string[] = [];
  const b: string[] = [];
  const subA = heldSerialLines(serial).subscribe((l) => a.push(l));
  const subB = heldSerialLines(serial).subscribe((l) => b.push(l));
  const port = await waitFor(() => serial.port());
  mock(port).emitData('both\n');
  await waitFor(() => (a.length === 1 && b.length === 1 ? true : undefined));
  t.same([a, b], [['both'], ['both']], 'each session sees every line');
  t.same(failures, [], 'the port was opened once (the mock binding refuses a second open of a locked port)');
  subA.unsubscribe();
  t.equal(serial.port(), port, 'still open while a session holds it');
  mock(port).emitData('one left\n');
  await waitFor(() => (b.length === 2 ? true : undefined));
  t.same(a, ['both']);
  subB.unsubscribe();
  t.equal(serial.port(), undefined, 'closed with the last session');
  await t.rejects(serial.write('x'), { code: 'serial_closed' });
});

t.test('a path that stays missing is never fatal: it is probed with the backoff, never waiting longer than reopen_max_ms', async (t) => {
  const serial = createSerialLine({ binding: 'mock', path: '/dev/GONE', reopen_initial_ms: 2, reopen_max_ms: 20 });
  const states: SessionStateEvent[] = [];
  const sub = heldSerialLines(serial, { onState: (e) => states.push(e) }).subscribe();
  t.teardown(() => sub.unsubscribe());
  const waits = () => states.filter((e) => e.state === 'backingOff');
  await waitFor(() => (waits().length >= 8 ? true : undefined), 10_000);
  t.match(waits()[0]!.reason, /cannot open \/dev\/GONE/);
  t.ok(
    waits().every((e) => e.delay_ms! <= 20),
    `waits capped: ${waits().map((e) => e.delay_ms)}`,
  );
  t.notOk(
    states.some((e) => e.state === 'failed'),
    'still probing',
  );
});

t.test('a port that dies as soon as it opens trips the breaker, whose wait is capped by reopen_max_ms too', async (t) => {
  SerialPortMock.binding.createPort('/dev/FLAPPY');
  t.teardown(() => SerialPortMock.binding.reset());
  const serial = createSerialLine({ binding: 'mock', path: '/dev/FLAPPY', reopen_initial_ms: 2, reopen_max_ms: 30 });
  const states: SessionStateEvent[] = [];
  const sub = heldSerialLines(serial, {
    onState: (e) => {
      states.push(e);
      // Unplugged again right after each open.
      if (e.state === 'streaming') queueMicrotask(() => serial.port()?.close());
    },
  }).subscribe();
  t.teardown(() => sub.unsubscribe());
  const breaker = await waitFor(() => states.find((e) => e.breaker === true), 10_000);
  t.equal(states.filter((e) => e.state === 'streaming').length, 5, 'five quick deaths open the breaker');
  t.ok(breaker.delay_ms! <= 30, `the breaker waits at most reopen_max_ms: ${breaker.delay_ms} ms`);
});

t.test('open$ says whether a port is open, each open and close as it happens; end() closes the port and completes it', async (t) => {
  SerialPortMock.binding.createPort('/dev/MOCK_OPEN');
  const serial = createSerialLine({ binding: 'mock', path: '/dev/MOCK_OPEN', reopen_initial_ms: 5, reopen_max_ms: 10 });
  const seen: boolean[] = [];
  let completed = false;
  serial.open$.subscribe({ next: (v) => seen.push(v), complete: () => (completed = true) });
  t.same(seen, [false], 'closed before any session holds it (replayed at once)');
  const held = heldSerialLines(serial).subscribe();
  const first = await firstValueFrom(serial.open$.pipe(filter(Boolean)));
  t.equal(first, true);
  t.ok(serial.port()?.isOpen, 'true only once the port is open');
  serial.port()!.close();
  await firstValueFrom(serial.open$.pipe(filter((v) => !v)));
  await firstValueFrom(serial.open$.pipe(filter(Boolean)));
  t.same(seen, [false, true, false, true], 'the close underneath and the reopen, each once');
  const late: boolean[] = [];
  serial.open$.subscribe((v) => late.push(v));
  t.same(late, [true], 'a late subscriber hears the state now');
  serial.end();
  t.same(seen, [false, true, false, true, false], 'ending the line closes its port');
  t.ok(completed, 'and completes open$');
  t.equal(serial.port(), undefined);
  held.unsubscribe();
  await t.rejects(serial.device.connect(new AbortController().signal), /the line was ended/, 'an ended line opens nothing');
  t.teardown(() => SerialPortMock.binding.reset());
});

t.test('NMEA: GGA, RMC and VTG parsed; bad checksums and other text refused', async (t) => {
  const gga = parseNmea('$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47');
  t.match(gga, { type: 'GGA', quality: 1, satellites: 8, hdop: 0.9, altitudeM: 545.4 });
  t.ok(Math.abs((gga as { lat: number }).lat - 48.1173) < 1e-4);
  t.ok(Math.abs((gga as { lon: number }).lon - 11.516667) < 1e-4);
  const rmc = parseNmea('$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A');
  t.match(rmc, { type: 'RMC', valid: true, speedKnots: 22.4, courseDeg: 84.4, date: '230394' });
  t.equal(parseNmea('$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*48'), 'bad_checksum');
  t.equal(parseNmea('hello'), 'not_nmea');
  t.equal(parseNmea(formatNmea('GPGSV', [1, 1, 0])), 'unsupported');
  t.match(parseNmea(formatNmea('GNVTG', ['054.7', 'T', '', 'M', '005.5', 'N', '010.2', 'K'])), { type: 'VTG', talker: 'GN', speedKmh: 10.2 });
  t.equal(nmeaCoordinate('3345.000', 'S'), -33.75);
  t.equal(nmeaCoordinate('', 'N'), undefined);
  t.match(parseNmea('$GPRMC,,V,,,,,,,,,,N*53'), { type: 'RMC', valid: false, lat: undefined });
});
