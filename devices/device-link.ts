// A device that a session actor opens and reopens (the microphone's recorder): its link connector, where an open link's data goes, its backoff.
import type { LinkConnector, StreamLink } from '../src/cloud/link.js';

/**
 * What the one reconnect engine (actors/streams/session-machine.ts) needs of a device. The device
 * never retries by itself: `connect` opens it once and resolves when it runs (a rejection marked
 * `fatal` cannot be cured by reopening: the engine stops in `failed`); the link's `close` event is
 * the device's end (`fatal` likewise); the engine decides when to open it again.
 */
export interface OpenableDevice {
  connect: LinkConnector;
  /**
   * Wires what an open link hears to the device's consumers (a hot observable they subscribe to,
   * never actor events: RxJS for media); the returned function unwires it.
   */
  attach(link: StreamLink): () => void;
  /** The wait before a reopen after a quick failure, doubling from `initialMs` to `maxMs` (src/backoff.ts). */
  backoff: { initialMs: number; maxMs: number };
}
