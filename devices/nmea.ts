// Parses the NMEA 0183 sentences a GPS sends (GGA, RMC, VTG) after checking their checksum.
export interface GgaFix {
  type: 'GGA';
  talker: string;
  /** UTC time of day `hhmmss.ss` as sent. */
  time: string;
  lat?: number;
  lon?: number;
  /** 0 none, 1 GPS, 2 DGPS, 4 RTK fixed, 5 RTK float, 6 estimated... */
  quality: number;
  satellites?: number;
  hdop?: number;
  altitudeM?: number;
}

export interface RmcFix {
  type: 'RMC';
  talker: string;
  time: string;
  /** `A` valid, `V` warning. */
  valid: boolean;
  lat?: number;
  lon?: number;
  speedKnots?: number;
  courseDeg?: number;
  /** `ddmmyy` as sent. */
  date: string;
}

export interface VtgCourse {
  type: 'VTG';
  talker: string;
  courseDeg?: number;
  speedKnots?: number;
  speedKmh?: number;
}

export type NmeaSentence = GgaFix | RmcFix | VtgCourse;

/** Why a line was not parsed: no NMEA framing, a wrong checksum, or a sentence type we do not read. */
export type NmeaRejection = 'not_nmea' | 'bad_checksum' | 'unsupported';

/** XOR of the characters between `$` and `*`, as two upper-case hex digits. */
export function nmeaChecksum(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) sum ^= body.charCodeAt(i);
  return sum.toString(16).toUpperCase().padStart(2, '0');
}

/** Degrees from NMEA `ddmm.mmmm` / `dddmm.mmmm` and a hemisphere letter; undefined when empty. */
export function nmeaCoordinate(value: string | undefined, hemisphere: string | undefined): number | undefined {
  if (!value || !hemisphere) return undefined;
  const dot = value.indexOf('.');
  const degDigits = (dot === -1 ? value.length : dot) - 2;
  if (degDigits < 1) return undefined;
  const deg = Number(value.slice(0, degDigits));
  const min = Number(value.slice(degDigits));
  if (!Number.isFinite(deg) || !Number.isFinite(min)) return undefined;
  const abs = deg + min / 60;
  return hemisphere === 'S' || hemisphere === 'W' ? -abs : abs;
}

const num = (s: string | undefined): number | undefined => {
  if (s === undefined || s === '') return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
};

/** Parses one line; returns the sentence or the reason it was rejected. Sentences without checksum are refused. */
export function parseNmea(line: string): NmeaSentence | NmeaRejection {
  const text = line.trim();
  const m = /^\$([A-Z0-9]{5,6}),(.*)\*([0-9A-Fa-f]{2})$/.exec(text);
  if (!m) return 'not_nmea';
  const [, address, rest, checksum] = m as unknown as [string, string, string, string];
  if (nmeaChecksum(`${address},${rest}`) !== checksum.toUpperCase()) return 'bad_checksum';
  const talker = address.slice(0, 2);
  const kind = address.slice(2);
  const f = rest.split(',');
  switch (kind) {
    case 'GGA':
      return {
        type: 'GGA',
        talker,
        time: f[0] ?? '',
        lat: nmeaCoordinate(f[1], f[2]),
        lon: nmeaCoordinate(f[3], f[4]),
        quality: num(f[5]) ?? 0,
        satellites: num(f[6]),
        hdop: num(f[7]),
        altitudeM: num(f[8]),
      };
    case 'RMC':
      return {
        type: 'RMC',
        talker,
        time: f[0] ?? '',
        valid: f[1] === 'A',
        lat: nmeaCoordinate(f[2], f[3]),
        lon: nmeaCoordinate(f[4], f[5]),
        speedKnots: num(f[6]),
        courseDeg: num(f[7]),
        date: f[8] ?? '',
      };
    case 'VTG':
      return { type: 'VTG', talker, courseDeg: num(f[0]), speedKnots: num(f[4]), speedKmh: num(f[6]) };
    default:
      return 'unsupported';
  }
}

/** Builds a sentence with its checksum (tests and simulators). */
export function formatNmea(address: string, fields: Array<string | number>): string {
  const body = `${address},${fields.join(',')}`;
  return `$${body}*${nmeaChecksum(body)}`;
}
