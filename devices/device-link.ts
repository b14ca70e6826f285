// A device that a session actor opens and reopens (the microphone's recorder): its link connector, where an open link's data goes, its backoff.
import type { LinkConnector, LinkEvent, StreamLink } from '../src/cloud/link.js';

/**
 * What the session machine (actors/streams/session-machine.ts) needs of a device. The device
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

/**
 * The listeners of one open run of a device and its end: `end` tells every listener once, and a
 * listener that subscribes after the end (between the open and the session's subscription) still
 * hears it, so an end is never lost.
 */
export class LinkEnd {
  private readonly listeners = new Set<(event: LinkEvent) => void>();
  private ended: LinkEvent | undefined;

  /** `StreamLink.subscribe`: the listener hears the end (at once, on a microtask, when it came already). */
  subscribe(listener: (event: LinkEvent) => void): () => void {
    this.listeners.add(listener);
    const missed = this.ended;
    if (missed) queueMicrotask(() => this.listeners.has(listener) && listener(missed));
    return () => this.listeners.delete(listener);
  }

  /** The run ended: every listener hears `event`, later ones too. Only the first end counts. */
  end(event: LinkEvent): void {
    if (this.ended) return;
    this.ended = event;
    for (const listener of this.listeners) listener(event);
  }
}
