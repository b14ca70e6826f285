// The simulated GPS receiver of `--simulate`: checksummed NMEA (GGA, RMC) once a second on GpsInput's mock ports, as a still receiver with a fix.
import { type MockPort, onMockPortOpen } from './serial-mock-open.js';
import { nmeaChecksum } from './nmea.js';

/** Where the simulated receiver stands: the Golden Gate Park bison paddock, 12 m above the sea. */
export const SIMULATED_FIX = { lat: 37.7694, lon: -122.4977, altitudeM: 12 };
/** Sentences a second, as most receivers send by default (1 Hz). */
const PERIOD_MS = 1000;

/** `ddmm.mmmm` (or `dddmm.mmmm` with `degreeDigits` 3) and the hemisphere letter of a signed degree value. */
function nmeaAngle(value: number, degreeDigits: 2 | 3, positive: string, negative: string): [string, string] {
  const abs = Math.abs(value);
  const degrees = Math.floor(abs);
  const minutes = (abs - degrees) * 60;
  return [`${String(degrees).padStart(degreeDigits, '0')}${minutes.toFixed(4).padStart(7, '0')}`, value >= 0 ? positive : negative];
}

const sentence = (body: string) => `$${body}*${nmeaChecksum(body)}\r\n`;

/** The GGA and RMC sentences of a fix at `at` (UTC), as a receiver standing still sends them. */
export function simulatedNmea(at: Date, fix = SIMULATED_FIX): string {
  const time = `${String(at.getUTCHours()).padStart(2, '0')}${String(at.getUTCMinutes()).padStart(2, '0')}${String(at.getUTCSeconds()).padStart(2, '0')}.00`;
  const date = `${String(at.getUTCDate()).padStart(2, '0')}${String(at.getUTCMonth() + 1).padStart(2, '0')}${String(at.getUTCFullYear() % 100).padStart(2, '0')}`;
  const [lat, ns] = nmeaAngle(fix.lat, 2, 'N', 'S');
  const [lon, ew] = nmeaAngle(fix.lon, 3, 'E', 'W');
  return (
    sentence(`GPGGA,${time},${lat},${ns},${lon},${ew},1,08,0.9,${fix.altitudeM.toFixed(1)},M,-25.0,M,,`) +
    sentence(`GPRMC,${time},A,${lat},${ns},${lon},${ew},0.0,0.0,${date},,,A`)
  );
}

/** Sends a fix every second while the port is open; the timer ends with the port. */
function send(port: MockPort): void {
  const timer = setInterval(() => {
    if (!port.isOpen) return void clearInterval(timer);
    port.emitData(simulatedNmea(new Date()));
  }, PERIOD_MS);
  timer.unref();
  const close = port.close.bind(port);
  port.close = async () => {
    clearInterval(timer);
    await close();
  };
}

/** Every mock port at `paths` opened from now on (in this process) sends NMEA as a GPS receiver. */
export function simulateGpsReceivers(paths: readonly string[]): void {
  onMockPortOpen('GPS receiver', paths, send);
}
