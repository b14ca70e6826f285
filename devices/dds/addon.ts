// The one loader of the DDS addon (@cortexd/dds-addon over CycloneDDS): typed, loaded once, a clear error when set-up skipped or failed it.
import { createRequire } from 'node:module';
import { DDS_FIX, DDS_PACKAGE } from '../../src/config/dds-users.js';
import { CortexError } from '../../src/errors.js';

export { DDS_FIX, DDS_PACKAGE };

/** QoS of a reader or writer: CycloneDDS's names, the few a robot bus needs. */
export interface DdsQos {
  reliable?: boolean;
  /** KEEP_LAST depth. */
  depth?: number;
  transientLocal?: boolean;
  /** Automatic liveliness with this lease (ms); absent: infinite. */
  livelinessMs?: number;
}

/** Event kinds of a listener callback (as the addon numbers them). */
export const EV_DATA = 0;
export const EV_MATCHED = 1;
export const EV_LIVELINESS = 2;
export type DdsCallback = (kind: number, payload: Buffer | number, change: number | undefined) => void;

/** The addon's functions: entities are CycloneDDS handles (numbers). */
export interface DdsAddon {
  cyclonedds: string;
  createDomain(domain: number, configXml: string): number;
  createParticipant(domain: number): number;
  createTopic(participant: number, name: string, typeName: string): number;
  createReader(participant: number, topic: number, qos: DdsQos, callback: DdsCallback): number;
  createWriter(participant: number, topic: number, qos: DdsQos, callback: DdsCallback): number;
  write(writer: number, cdr: Uint8Array): void;
  deleteEntity(entity: number): void;
  matched(entity: number): number;
}

/** DDS failed: the addon is missing (`dds_unavailable`) or a CycloneDDS call failed (`dds_failed`). */
export class DdsError extends CortexError {
  constructor(code: 'dds_unavailable' | 'dds_failed' | 'dds_type', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'DdsError';
  }
}

let loaded: DdsAddon | undefined;

/** Loads the addon once per process; throws DdsError('dds_unavailable') with the fix when it is not built. */
export function loadDds(): DdsAddon {
  if (loaded) return loaded;
  try {
    // Resolved at run time (the CLI bundle leaves it alone): the package's main is the compiled .node file.
    const require = createRequire(import.meta.url);
    loaded = require(DDS_PACKAGE) as DdsAddon;
    return loaded;
  } catch (err) {
    const why = err instanceof Error ? err.message.split('\n')[0] : String(err);
    throw new DdsError('dds_unavailable', `the DDS addon (${DDS_PACKAGE}) does not load (${why}); ${DDS_FIX}`, { cause: err });
  }
}

/** Whether the addon loads here (no throw). */
export function ddsInstalled(): boolean {
  try {
    loadDds();
    return true;
  } catch {
    return false;
  }
}
