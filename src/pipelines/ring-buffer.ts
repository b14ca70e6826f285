// A bounded buffer of audio chunks kept while a socket reconnects: oldest bytes dropped and counted on overflow, never unbounded.
import { Observable, type OperatorFunction } from 'rxjs';

export interface RingStats {
  /** Bytes currently held. */
  bytes: number;
  /** Chunks currently held. */
  chunks: number;
  /** Bytes dropped because the buffer was full, since creation. */
  droppedBytes: number;
  /** Chunks dropped (whole or in part) since creation. */
  droppedChunks: number;
}

/**
 * FIFO of PCM chunks holding at most `capacityBytes`. When a push does not fit, the oldest bytes go
 * first (a ring: the most recent speech is worth most after a reconnect); a chunk larger than the
 * capacity keeps only its newest `capacityBytes`. Dropped bytes are counted, never silently lost.
 */
export class PcmRingBuffer {
  readonly capacityBytes: number;
  private chunks: Buffer[] = [];
  private held = 0;
  private dropped = 0;
  private droppedCount = 0;

  constructor(capacityBytes: number) {
    if (!Number.isInteger(capacityBytes) || capacityBytes < 0) throw new RangeError(`ring capacity must be a non-negative integer, got ${capacityBytes}`);
    this.capacityBytes = capacityBytes;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) {
      // An empty chunk marks the end of an utterance (voice-gate.ts): kept in order behind the audio it
      // ends, never alone (with no audio held there is nothing to end) and never twice in a row.
      const last = this.chunks.at(-1);
      if (last !== undefined && last.length > 0) this.chunks.push(chunk);
      return;
    }
    if (chunk.length > this.capacityBytes) {
      this.dropped += this.held + (chunk.length - this.capacityBytes);
      this.droppedCount += this.chunks.filter((c) => c.length > 0).length + 1;
      this.chunks = this.capacityBytes ? [chunk.subarray(chunk.length - this.capacityBytes)] : [];
      this.held = this.capacityBytes;
      return;
    }
    while (this.held + chunk.length > this.capacityBytes) {
      const oldest = this.chunks.shift()!;
      this.held -= oldest.length;
      this.dropped += oldest.length;
      if (oldest.length > 0) this.droppedCount += 1;
    }
    this.chunks.push(chunk);
    this.held += chunk.length;
  }

  /** Removes and returns every held chunk, oldest first. */
  drain(): Buffer[] {
    const out = this.chunks;
    this.chunks = [];
    this.held = 0;
    return out;
  }

  stats(): RingStats {
    return { bytes: this.held, chunks: this.chunks.length, droppedBytes: this.dropped, droppedChunks: this.droppedCount };
  }
}

/**
 * Passes chunks through while `open$` is true; while it is false, keeps them in `ring`; when it turns
 * true again, emits the ring's content (oldest first) before any new chunk. Until `open$` emits, the
 * gate is closed. Rate: that of the source. Drop policy: none while open; ring overflow (oldest
 * first, counted in `ring.stats()`) while closed.
 */
export function gateWithRing(open$: Observable<boolean>, ring: PcmRingBuffer): OperatorFunction<Buffer, Buffer> {
  return (source) =>
    new Observable<Buffer>((subscriber) => {
      let open = false;
      const gate = open$.subscribe({
        next(isOpen) {
          if (isOpen && !open) {
            open = true;
            for (const chunk of ring.drain()) {
              if (!open) {
                ring.push(chunk);
                continue;
              }
              subscriber.next(chunk);
            }
          } else if (!isOpen) {
            open = false;
          }
        },
        error: (err) => subscriber.error(err),
      });
      const data = source.subscribe({
        next(chunk) {
          if (open) subscriber.next(chunk);
          else ring.push(chunk);
        },
        error: (err) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
      return () => {
        gate.unsubscribe();
        data.unsubscribe();
      };
    });
}
