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
  /**
   * When a run is healthy (the engine's count of failures in a row starts again): `time`, once open for
   * the engine's healthy time (1 s; the default); `data`, only once the run proved it (`LinkEnd.proven`).
   */
  health?: 'time' | 'data';
  /** Runs in a row that failed before they were healthy after which the engine gives up (`failed`), and what they lacked ("with no audio"). */
  giveUp?: { after: number; what: string };
}

/** What a listener hears when the run proved healthy: a message the engine counts as the run's health. */
const PROVEN: LinkEvent = { type: 'message', message: { proven: true } };

/**
 * The listeners of one open run of a device and its end: `end` tells every listener once, and a
 * listener that subscribes after the end (between the open and the session's subscription) still
 * hears it, so an end is never lost.
 */
export class LinkEnd {
  private readonly listeners = new Set<(event: LinkEvent) => void>();
  private ended: LinkEvent | undefined;
  private wasProven = false;

  /** `StreamLink.subscribe`: the listener hears the end (at once, on a microtask, when it came already). */
  subscribe(listener: (event: LinkEvent) => void): () => void {
    this.listeners.add(listener);
    const missed = this.ended;
    const proven = this.wasProven;
    if (missed || proven)
      queueMicrotask(() => {
        if (proven && this.listeners.has(listener)) listener(PROVEN);
        if (missed && this.listeners.has(listener)) listener(missed);
      });
    return () => this.listeners.delete(listener);
  }

  /** The run proved healthy (its first data): every listener, and any that subscribes later, hears it once (a `message`). */
  proven(): void {
    if (this.ended || this.wasProven) return;
    this.wasProven = true;
    for (const listener of this.listeners) listener(PROVEN);
  }

  /** The run ended: every listener hears `event`, later ones too. Only the first end counts. */
  end(event: LinkEvent): void {
    if (this.ended) return;
    this.ended = event;
    for (const listener of this.listeners) listener(event);
  }
}
