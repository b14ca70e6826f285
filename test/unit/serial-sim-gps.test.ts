// The simulated GPS receiver of --simulate: its sentences are NMEA that the GPS input's own parser takes (checksums, a fix, the position), sent once a second on the mock ports named, and stopped with the port.
import t from 'tap';
import { SerialPortMock } from 'serialport';
import { parseNmea } from '../../devices/nmea.js';
import { SIMULATED_FIX, simulateGpsReceivers, simulatedNmea } from '../../devices/serial-sim-gps.js';

t.test('GGA and RMC of a fix standing still, as the GPS input parses them', async (t) => {
  const lines = simulatedNmea(new Date(Date.UTC(2026, 10, 29, 9, 5, 7)))
    .trim()
    .split('\r\n');
  t.equal(lines.length, 2);
  const [ggaLine = '', rmcLine = ''] = lines;
  const [gga, rmc] = [parseNmea(ggaLine), parseNmea(rmcLine)];
  t.match(gga, { type: 'GGA', quality: 1, satellites: 8, altitudeM: 12 }, ggaLine);
  t.match(rmc, { type: 'RMC', valid: true, date: '291126' }, rmcLine);
  const g = gga as { lat: number; lon: number };
  t.ok(Math.abs(g.lat - SIMULATED_FIX.lat) < 1e-5, `latitude ${g.lat}`);
  t.ok(Math.abs(g.lon - SIMULATED_FIX.lon) < 1e-5, `longitude ${g.lon}`);
  t.match(ggaLine, /^\$GPGGA,090507\.00,/);
  t.match(rmcLine, /,291126,/, 'the date as ddmmyy');
});

t.test('a mock port named sends sentences every second while open; another mock port stays silent', async (t) => {
  SerialPortMock.binding.createPort('/dev/sim-gps-test');
  SerialPortMock.binding.createPort('/dev/sim-other-test');
  simulateGpsReceivers(['/dev/sim-gps-test']);
  const open = (path: string) =>
    new Promise<SerialPortMock>((resolve, reject) => {
      const port = new SerialPortMock({ path, baudRate: 9600 }, (err) => (err ? reject(err) : resolve(port)));
    });
  const gps = await open('/dev/sim-gps-test');
  const other = await open('/dev/sim-other-test');
  let gpsText = '';
  let otherText = '';
  gps.on('data', (d: Buffer) => (gpsText += d.toString()));
  other.on('data', (d: Buffer) => (otherText += d.toString()));
  const deadline = Date.now() + 10_000;
  while (!/\$GPRMC[^\n]*\n[\s\S]*\$GPRMC/.test(gpsText) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  t.ok((gpsText.match(/\$GPGGA/g) ?? []).length >= 2, 'two fixes or more');
  t.equal(otherText, '', 'a port not named sends nothing');
  await new Promise<void>((resolve) => gps.close(() => resolve()));
  await new Promise<void>((resolve) => other.close(() => resolve()));
  const after = gpsText.length;
  await new Promise((r) => setTimeout(r, 1500));
  t.equal(gpsText.length, after, 'nothing after the port closed');
});
