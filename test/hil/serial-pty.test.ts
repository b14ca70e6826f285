// HIL: serial lines through a socat pseudo-terminal pair whose peer closes and comes back; NMEA from gpsd's own fake-pty feeder.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSerialLine } from '../../devices/serial.js';
import { heldSerialLines } from '../helpers/held-serial-lines.js';
import { parseNmea, type NmeaSentence } from '../../devices/nmea.js';
import { until } from '../helpers/wait.js';

const dir = mkdtempSync(join(tmpdir(), 'hil-serial-'));
const ours = join(dir, 'robot');
const peer = join(dir, 'peer');

function startSocat(): ChildProcess {
  const p = spawn('socat', ['-d', '-d', `pty,raw,echo=0,link=${ours}`, `pty,raw,echo=0,link=${peer}`], { stdio: 'ignore' });
  return p;
}
const stop = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null ? r() : (p.once('exit', () => r()), p.kill())));
const writePeer = (text: string) => {
  const fd = openSync(peer, 'w');
  writeSync(fd, text);
  closeSync(fd);
};

t.test('lines are read; when the peer goes away and comes back, reading resumes', async (t) => {
  let socat = startSocat();
  t.teardown(() => stop(socat));
  await until('pty links', () => existsSync(ours) && existsSync(peer));
  const serial = createSerialLine({ binding: 'serialport', path: ours, baud_rate: 115200, reopen_initial_ms: 50, reopen_max_ms: 200 });
  const lines: string[] = [];
  const failures: string[] = [];
  serial.failures$.subscribe((e) => failures.push(e.message));
  const sub = heldSerialLines(serial).subscribe((l) => lines.push(l));
  t.teardown(() => sub.unsubscribe());
  await until('port open', () => serial.port()?.isOpen);
  writePeer('first line\r\nsecond');
  writePeer(' line\n');
  await until('two lines', () => lines.length >= 2);
  t.same(lines, ['first line', 'second line']);

  await stop(socat);
  await until('a failure after the peer closed', () => failures.length >= 1);
  socat = startSocat();
  await until('pty links again', () => existsSync(ours) && existsSync(peer));
  await until('port reopened', () => serial.port()?.isOpen);
  writePeer('after reconnect\n');
  await until('third line', () => lines.length >= 3);
  t.equal(lines[2], 'after reconnect');
  t.ok(
    failures.some((m) => /serial: /.test(m)),
    `failures reported: ${failures.join(' | ')}`,
  );
});

t.test("NMEA fed into a pty by gpsd's gpsfake machinery is parsed into fixes", async (t) => {
  const log = join(dir, 'track.log');
  writeFileSync(
    log,
    ['$GPGGA,123519,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,*47', '$GPRMC,123519,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W*6A', ''].join(
      '\r\n',
    ),
  );
  // gpsfake itself starts gpsd on the pty; its FakePTY class (same package) feeds a pty without gpsd,
  // so the robot's reader can be the one on the other end.
  const feeder = join(dir, 'feed.py');
  writeFileSync(
    feeder,
    [
      'import sys, time, gps.fake',
      'p = gps.fake.FakePTY(gps.fake.TestLoad(open(sys.argv[1], "rb")), speed=9600)',
      'print(p.byname, flush=True)',
      'while True:',
      '    p.feed()',
      '    time.sleep(0.05)',
    ].join('\n'),
  );
  const py = spawn('/usr/bin/python3', [feeder, log], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => stop(py));
  let out = '';
  let err = '';
  py.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  py.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const ptyPath = await until(`the feeder's pty (stderr: ${err})`, () => out.split('\n')[0]?.startsWith('/dev/') && out.split('\n')[0]);
  const serial = createSerialLine({ binding: 'serialport', path: ptyPath, baud_rate: 9600 });
  const fixes: NmeaSentence[] = [];
  const sub = heldSerialLines(serial).subscribe((l) => {
    const s = parseNmea(l);
    if (typeof s !== 'string') fixes.push(s);
  });
  t.teardown(() => sub.unsubscribe());
  await until('GGA and RMC', () => fixes.some((f) => f.type === 'GGA') && fixes.some((f) => f.type === 'RMC'));
  t.match(
    fixes.find((f) => f.type === 'RMC'),
    { valid: true, speedKnots: 22.4 },
  );
  t.match(
    fixes.find((f) => f.type === 'GGA'),
    { quality: 1, satellites: 8 },
  );
});
