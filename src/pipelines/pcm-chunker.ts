// Cuts a PCM byte stream into chunks of a fixed duration with exact byte accounting (no sample lost or duplicated).
import { Observable, type OperatorFunction } from 'rxjs';

/** Bytes per sample of the only format the ASR sockets take: signed 16-bit little-endian, mono. */
export const PCM_BYTES_PER_SAMPLE = 2;
export const DEFAULT_CHUNK_MS = 100;

export interface PcmFormat {
  /** Samples per second (8000, 16000, 22050 or 44100 for the ASR sockets). */
  rate: number;
  /** Channels; the ASR sockets take mono. */
  channels?: number;
}

/** Size in bytes of `periodMs` of audio, rounded down to whole sample frames (never zero). */
export function chunkBytes(format: PcmFormat, periodMs: number = DEFAULT_CHUNK_MS): number {
  const frameBytes = PCM_BYTES_PER_SAMPLE * (format.channels ?? 1);
  const frames = Math.floor((format.rate * periodMs) / 1000);
  return Math.max(1, frames) * frameBytes;
}

/** Duration in milliseconds of `bytes` of PCM (the spec: seconds = bytes / (rate * 2) for mono). */
export function pcmDurationMs(bytes: number, format: PcmFormat): number {
  return (bytes * 1000) / (format.rate * PCM_BYTES_PER_SAMPLE * (format.channels ?? 1));
}

/**
 * Stateful chunker. `push` accepts buffers of any size (odd byte counts included) and returns the
 * complete chunks now available, in order; bytes of an incomplete chunk wait for the next push.
 * Invariant: bytesIn === bytesOut + pending, always.
 */
export class PcmChunker {
  readonly size: number;
  private parts: Buffer[] = [];
  private pendingBytes = 0;
  private inTotal = 0;
  private outTotal = 0;

  constructor(size: number) {
    if (!Number.isInteger(size) || size <= 0) throw new RangeError(`chunk size must be a positive integer, got ${size}`);
    this.size = size;
  }

  get bytesIn(): number {
    return this.inTotal;
  }
  get bytesOut(): number {
    return this.outTotal;
  }
  get pending(): number {
    return this.pendingBytes;
  }

  push(data: Buffer): Buffer[] {
    if (data.length === 0) return [];
    this.inTotal += data.length;
    this.parts.push(data);
    this.pendingBytes += data.length;
    if (this.pendingBytes < this.size) return [];
    // One concat per push (not per chunk) keeps the copy cost linear in the bytes received.
    const all = this.parts.length === 1 ? data : Buffer.concat(this.parts, this.pendingBytes);
    const out: Buffer[] = [];
    let offset = 0;
    while (all.length - offset >= this.size) {
      out.push(all.subarray(offset, offset + this.size));
      offset += this.size;
    }
    const rest = all.subarray(offset);
    this.parts = rest.length ? [rest] : [];
    this.pendingBytes = rest.length;
    this.outTotal += offset;
    return out;
  }

  /** Returns the incomplete tail (possibly empty) and empties the chunker. */
  flush(): Buffer {
    const tail = this.parts.length === 1 ? this.parts[0]! : Buffer.concat(this.parts, this.pendingBytes);
    this.parts = [];
    this.outTotal += tail.length;
    this.pendingBytes = 0;
    return tail;
  }
}

export interface ChunkPcmOptions extends PcmFormat {
  /** Target chunk duration; default 100 ms. */
  periodMs?: number;
  /** Emit the incomplete tail when the source completes (default true: no sample is lost). */
  flushOnComplete?: boolean;
}

/**
 * Rate: one chunk per `periodMs` of audio, emitted as soon as enough bytes arrived (no timer, so it
 * adds no latency beyond waiting for the bytes). Drop policy: none; every byte in comes out once, in
 * order, and the tail is emitted on completion (a shorter chunk; errors drop only that tail).
 */
export function chunkPcm(options: ChunkPcmOptions): OperatorFunction<Buffer, Buffer> {
  const size = chunkBytes(options, options.periodMs ?? DEFAULT_CHUNK_MS);
  const flushOnComplete = options.flushOnComplete ?? true;
  return (source) =>
    new Observable<Buffer>((subscriber) => {
      const chunker = new PcmChunker(size);
      return source.subscribe({
        next(data) {
          for (const chunk of chunker.push(data)) subscriber.next(chunk);
        },
        error(err) {
          subscriber.error(err);
        },
        complete() {
          if (flushOnComplete) {
            const tail = chunker.flush();
            if (tail.length) subscriber.next(tail);
          }
          subscriber.complete();
        },
      });
    });
}
