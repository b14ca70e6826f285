// Named places: the latest GPS position, a locations.json in the state directory written atomically, and the remember_location connector.
import { readFileSync } from 'node:fs';
import { writeJsonAtomic } from '../../src/atomic-file.js';
import { join } from 'node:path';
import { z } from 'zod';
import { CortexError, describeError } from '../../src/errors.js';
import type { ActionConnector, ConnectorFactory } from '../../src/cortex/action.js';
import type { Position } from '../../src/cortex/positions.js';
import { type RememberLocationArgs, StateConnectorOptions } from '../../src/plugins/schemas/actions.js';

export { implicitActions } from '../../src/config/used-plugins.js';

export { type Position, PositionBoard } from '../../src/cortex/positions.js';

export const SavedLocation = z.object({ lat: z.number(), lon: z.number(), altitude_m: z.number().optional(), saved_at: z.string() });
export const LocationsFile = z.object({ version: z.literal(1), locations: z.record(z.string(), SavedLocation) });
export type LocationsFile = z.infer<typeof LocationsFile>;

/** `<stateDir>/locations.json`: named positions, shared by every mode and configuration on this robot. */
export class LocationStore {
  readonly path: string;
  constructor(stateDir: string) {
    this.path = join(stateDir, 'locations.json');
  }

  /** The saved places; a missing file is none, a corrupt one throws with the reason (it is never overwritten silently). */
  load(): LocationsFile['locations'] {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new CortexError('locations_corrupt', `${this.path} is not JSON (${describeError(err)}); fix or remove it`);
    }
    const parsed = LocationsFile.safeParse(json);
    if (!parsed.success) throw new CortexError('locations_corrupt', `${this.path}: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return parsed.data.locations;
  }

  /** Saves (or replaces) a place by name; names are trimmed and compared case-insensitively. */
  remember(name: string, position: Omit<Position, 'at'>, now = new Date()): void {
    const locations = this.load();
    const key = name.trim();
    for (const existing of Object.keys(locations)) if (existing.toLowerCase() === key.toLowerCase()) delete locations[existing];
    locations[key] = {
      lat: position.lat,
      lon: position.lon,
      ...(position.altitudeM !== undefined ? { altitude_m: position.altitudeM } : {}),
      saved_at: now.toISOString(),
    };
    writeJsonAtomic(this.path, { version: 1, locations });
  }

  /** One line for the prompt, e.g. `Known places: kitchen (48.117300, 11.516667); door (...)`, or undefined when none. */
  describe(): string | undefined {
    const entries = Object.entries(this.load());
    if (!entries.length) return undefined;
    return `Known places: ${entries.map(([n, l]) => `${n} (${l.lat.toFixed(6)}, ${l.lon.toFixed(6)})`).join('; ')}`;
  }
}

/** The `state_dir` connector of remember_location (its descriptor is in src/plugins/actions.ts). */
export const createStateDirConnector: ConnectorFactory = (config, ctx): ActionConnector => {
  const o = StateConnectorOptions.parse(config ?? {});
  const store = new LocationStore(ctx.stateDir);
  return {
    name: 'state_dir',
    async run(value, signal) {
      signal.throwIfAborted();
      const v = value as z.infer<typeof RememberLocationArgs>;
      const here = v.lat !== undefined && v.lon !== undefined ? { lat: v.lat, lon: v.lon } : ctx.positions?.latest(o.max_fix_age_seconds * 1000);
      if (!here) throw new CortexError('location_no_fix', `cannot remember "${v.name}": no GPS fix in the last ${o.max_fix_age_seconds} s`);
      store.remember(v.name, here);
      ctx.write(`[remember_location] ${v.name} at ${here.lat.toFixed(6)}, ${here.lon.toFixed(6)}`);
    },
    async stop() {},
  };
};
