// GpsInput: NMEA sentences from a serial GPS (checksummed GGA, RMC, VTG) folded into fix, position and speed: the "GPS: ..." prompt line.
import { type Observable, filter, map, scan, tap } from 'rxjs';
import type { InputContext, InputFactory, InputMessage, InputPlugin } from '../../src/cortex/input.js';
import { GpsInputSchema, serialConfigOf, type GpsInputConfig } from '../../src/plugins/schemas/inputs.js';
import { createSerialLine, type SerialLine } from '../../devices/serial.js';
import { parseNmea, type NmeaSentence } from '../../devices/nmea.js';
import { BufferedInput } from './buffered-input.js';
import { serialSessionInput } from '../streams/serial-session.js';
import { gpsChanged } from '../../src/cortex/wake.js';

export { GpsInputSchema, type GpsInputConfig };

/** What the GPS said last, merged over sentence types. */
export interface GpsState {
  /** GGA quality > 0, or RMC status `A`. */
  fix: boolean;
  quality?: number;
  satellites?: number;
  lat?: number;
  lon?: number;
  altitudeM?: number;
  speedKnots?: number;
  courseDeg?: number;
  /** UTC time of the last sentence, `hhmmss.ss`. */
  time?: string;
}

export interface GpsRaw {
  sentence: NmeaSentence;
  state: GpsState;
  at: number;
}

const KNOT_MS = 0.514444;
const QUALITY = ['none', 'GPS', 'DGPS', 'PPS', 'RTK fixed', 'RTK float', 'estimated', 'manual', 'simulated'];

/** Folds one sentence into the state: position and fix from GGA/RMC, speed and course from RMC/VTG. */
export function foldGps(state: GpsState, s: NmeaSentence): GpsState {
  const next: GpsState = { ...state };
  const set = <K extends keyof GpsState>(k: K, v: GpsState[K] | undefined) => {
    if (v !== undefined) next[k] = v;
  };
  if (s.type === 'GGA') {
    next.fix = s.quality > 0;
    next.quality = s.quality;
    set('satellites', s.satellites);
    set('altitudeM', s.altitudeM);
    set('time', s.time || undefined);
    if (s.quality > 0) {
      set('lat', s.lat);
      set('lon', s.lon);
    }
  } else if (s.type === 'RMC') {
    if (next.quality === undefined) next.fix = s.valid;
    set('time', s.time || undefined);
    if (s.valid) {
      set('lat', s.lat);
      set('lon', s.lon);
      set('speedKnots', s.speedKnots);
      set('courseDeg', s.courseDeg);
    }
  } else {
    set('speedKnots', s.speedKnots ?? (s.speedKmh !== undefined ? s.speedKmh / 1.852 : undefined));
    set('courseDeg', s.courseDeg);
  }
  return next;
}

/** One line for the prompt, e.g. `fix (GPS, 8 satellites), position 48.117300, 11.516667, altitude 545.4 m, speed 11.5 m/s, course 84°`. */
export function describeGps(s: GpsState): string {
  const sats = s.satellites !== undefined ? `${s.satellites} satellites` : undefined;
  if (!s.fix) return `no fix${sats ? ` (${sats})` : ''}`;
  const how = [s.quality !== undefined ? (QUALITY[s.quality] ?? `quality ${s.quality}`) : undefined, sats].filter(Boolean).join(', ');
  const parts = [`fix${how ? ` (${how})` : ''}`];
  if (s.lat !== undefined && s.lon !== undefined) parts.push(`position ${s.lat.toFixed(6)}, ${s.lon.toFixed(6)}`);
  if (s.altitudeM !== undefined) parts.push(`altitude ${s.altitudeM} m`);
  if (s.speedKnots !== undefined) parts.push(`speed ${(s.speedKnots * KNOT_MS).toFixed(1)} m/s`);
  if (s.courseDeg !== undefined && (s.speedKnots ?? 0) > 0) parts.push(`course ${Math.round(s.courseDeg)}°`);
  return parts.join(', ');
}

/**
 * The port is the input's device: the input actor runs its session (child `device:serial`, stream
 * kind `serial`), which opens it and reopens it after an unplug. Listening reads its lines; lines that are not NMEA, fail their checksum
 * or are of another type are skipped (counted in `rejected`). Each sentence yields the merged state;
 * the buffer keeps the newest (`GPS: ...`), `final: false`.
 */
export class GpsInput extends BufferedInput<GpsRaw> {
  readonly device: NonNullable<InputPlugin['device']>;
  rejected = 0;

  constructor(
    private readonly config: GpsInputConfig,
    private readonly serial: SerialLine,
    private readonly ctx?: Pick<InputContext, 'logger' | 'signal' | 'publishContext' | 'positions'>,
  ) {
    super({
      type: 'GpsInput',
      descriptor: config.descriptor ?? 'GPS',
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'latest',
      ...(ctx?.logger ? { logger: ctx.logger } : {}),
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
    });
    // Nothing about a port is fatal (its session never fails): its states are on the bus, its lines in `source()`.
    this.device = { name: 'serial', kind: 'serial', input: serialSessionInput(serial), onEvent: () => undefined };
  }

  protected source(): Observable<GpsRaw> {
    return this.serial.lines().pipe(
      map((line) => parseNmea(line)),
      filter((s): s is NmeaSentence => {
        if (typeof s !== 'string') return true;
        this.rejected += 1;
        return false;
      }),
      scan((acc: GpsRaw | undefined, sentence) => ({ sentence, state: foldGps(acc?.state ?? { fix: false }, sentence), at: Date.now() }), undefined),
      filter((r): r is GpsRaw => r !== undefined),
      // Each fix becomes the process's newest position, which `remember_location` saves by name.
      tap((r) => {
        const { fix, lat, lon, altitudeM } = r.state;
        if (fix && lat !== undefined && lon !== undefined)
          this.ctx?.positions?.publish({ lat, lon, ...(altitudeM !== undefined ? { altitudeM } : {}), at: r.at });
        this.publish(r.state);
      }),
    );
  }

  private published = '';

  /** Context for `context_aware` rules when the fix or the position (to 1e-6 degree) changed: gps_fix, latitude, longitude, altitude_m. */
  private publish(s: GpsState): void {
    const values: Record<string, unknown> = { gps_fix: s.fix };
    if (s.fix && s.lat !== undefined && s.lon !== undefined) {
      values.latitude = Number(s.lat.toFixed(6));
      values.longitude = Number(s.lon.toFixed(6));
      if (s.altitudeM !== undefined) values.altitude_m = s.altitudeM;
    }
    const key = JSON.stringify(values);
    if (key === this.published) return;
    this.published = key;
    this.ctx?.publishContext?.(values);
  }

  /** A meaningful change: the fix gained or lost, or a move of at least `wake_distance_m`. */
  protected override changed(previous: string, next: string): boolean {
    return gpsChanged(previous, next, this.config.wake_distance_m);
  }

  protected toMessage(raw: GpsRaw): InputMessage | undefined {
    return { timestamp: raw.at, text: describeGps(raw.state), final: false };
  }
}

/** The GpsInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createGpsInput: InputFactory = (raw, ctx) => {
  const config = GpsInputSchema.parse(raw ?? {});
  return new GpsInput(config, createSerialLine(serialConfigOf(config), { logger: ctx.logger }), ctx);
};
