// Proves SerialReader and GpsInput over serialport's mock binding, the port held by the session the input actor would run (`device`): lines as "Serial:" lines, NMEA folded into fix, position and speed.
import t from 'tap';
import { SerialPortMock } from 'serialport';
import { firstValueFrom, take, toArray, tap } from 'rxjs';
import { SerialReader, SerialReaderSchema, serialConfigOf, createSerialReader } from '../../actors/inputs/serial-reader.js';
import { GpsInput, GpsInputSchema, describeGps, foldGps } from '../../actors/inputs/gps-input.js';
import { PositionBoard } from '../../actors/actions/locations.js';
import { createSerialLine } from '../../devices/serial.js';
import { formatNmea, parseNmea, type NmeaSentence } from '../../devices/nmea.js';
import { createLogger } from '../../src/log.js';
import { createActor } from 'xstate';
import { streamSessionLogic, type SessionInput } from '../../actors/streams/session-machine.js';
import type { InputPlugin } from '../../src/cortex/input.js';

/** The input's device session, as the input actor runs it (child `device:serial`). */
const session = (input: Pick<InputPlugin, 'device'>) => createActor(streamSessionLogic(), { input: input.device!.input as SessionInput }).start();
import { waitFor } from '../helpers/wait.js';

const mock = (port: unknown) => (port as SerialPortMock).port!;
t.teardown(() => SerialPortMock.binding.reset());

t.test('SerialReader: each line is a message; the buffer holds the lines since the last tick', async (t) => {
  SerialPortMock.binding.createPort('/dev/MOCKR0');
  const config = SerialReaderSchema.parse({ binding: 'mock', serial_port: '/dev/MOCKR0', buffer_size: 2 });
  const serial = createSerialLine(serialConfigOf(config));
  const input = new SerialReader(config, serial);
  t.match(input.device, { name: 'serial', kind: 'serial' });
  const device = session(input);
  const raws: string[] = [];
  // As the input actor does: one rawToText per raw event, which buffers the message.
  const sub = input.listen().subscribe((l) => (raws.push(l), input.rawToText(l)));
  mock(await waitFor(() => serial.port())).emitData('temp=21.5\r\n\r\nhumidity=40\nlight=300\npressure=1013\n');
  await waitFor(() => (raws.length === 5 ? true : undefined));
  t.same(raws, ['temp=21.5', '', 'humidity=40', 'light=300', 'pressure=1013']);
  t.equal(input.formattedLatestBuffer(), 'Serial: light=300\nSerial: pressure=1013', 'empty lines skipped; the two newest kept');
  t.equal(input.dropped, 2);
  t.equal(input.rawToText('x')?.final, false, 'a line does not wake the loop');
  sub.unsubscribe();
  await input.stop();
  device.stop();
  await t.rejects(serial.write('x'), { code: 'serial_closed' }, 'stop closes the port');
});

t.test('SerialReader loads with no config (older configurations name it bare)', async (t) => {
  t.match(SerialReaderSchema.parse({}), { binding: 'serialport', path: '/dev/ttyUSB0', baud_rate: 9600 });
  const ctx = { logger: createLogger({ level: 'silent' }), stateDir: '/tmp', signal: new AbortController().signal };
  const input = createSerialReader({ binding: 'mock', path: '/dev/NOPE' }, ctx);
  t.equal(input.type, 'SerialReader');
  await input.stop();
});

const GGA = formatNmea('GPGGA', ['123519', '4807.038', 'N', '01131.000', 'E', 1, '08', '0.9', '545.4', 'M', '46.9', 'M', '', '']);
const RMC = formatNmea('GPRMC', ['123520', 'A', '4807.040', 'N', '01131.010', 'E', '022.4', '084.4', '230394', '003.1', 'W']);
const NOFIX = formatNmea('GPGGA', ['123521', '', '', '', '', 0, '03', '', '', 'M', '', 'M', '', '']);

t.test('GpsInput: fix, position, altitude, speed and course from GGA and RMC; bad checksums skipped', async (t) => {
  SerialPortMock.binding.createPort('/dev/MOCKG0');
  const config = GpsInputSchema.parse({ binding: 'mock', path: '/dev/MOCKG0' });
  const serial = createSerialLine(serialConfigOf(config));
  const gpsPositions = new PositionBoard();
  const input = new GpsInput(config, serial, { logger: createLogger({ level: 'silent' }), signal: new AbortController().signal, positions: gpsPositions });
  const device = session(input);
  t.teardown(() => device.stop());
  const got = firstValueFrom(
    input.listen().pipe(
      tap((r) => input.rawToText(r)),
      take(2),
      toArray(),
    ),
  );
  const broken = GGA.slice(0, -2) + '00';
  mock(await waitFor(() => serial.port())).emitData(`${broken}\r\nnoise\r\n${GGA}\r\n${RMC}\r\n`);
  const raws = await got;
  t.equal(input.rejected, 2, 'a wrong checksum and a non-NMEA line');
  t.equal(
    input.formattedLatestBuffer(),
    'GPS: fix (GPS, 8 satellites), position 48.117333, 11.516833, altitude 545.4 m, speed 11.5 m/s, course 84°',
    'the newest state only',
  );
  t.equal(input.rawToText(raws[0]!)?.text, 'fix (GPS, 8 satellites), position 48.117300, 11.516667, altitude 545.4 m', 'the first fix alone');
  const position = gpsPositions.latest();
  t.match(position, { altitudeM: 545.4 }, 'each fix is published for remember_location');
  t.ok(Math.abs(position!.lat - 48.117333) < 1e-6 && Math.abs(position!.lon - 11.516833) < 1e-6, 'at the newest fix');
  await input.stop();
});

t.test('GPS state: losing the fix keeps the last position out of the line; VTG gives speed in km/h', async (t) => {
  const s = (line: string) => parseNmea(line) as NmeaSentence;
  let state = foldGps({ fix: false }, s(GGA));
  state = foldGps(state, s(NOFIX));
  t.equal(describeGps(state), 'no fix (3 satellites)');
  const vtg = foldGps({ fix: true, quality: 1 }, s(formatNmea('GPVTG', ['054.7', 'T', '034.4', 'M', '', 'N', '010.0', 'K'])));
  t.equal(describeGps(vtg), 'fix (GPS), speed 2.8 m/s, course 55°');
});
