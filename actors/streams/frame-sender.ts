// The data plane of a VLM session: encoded frames go to the open socket, latest-frame-wins on the socket's bufferedAmount.
import { asyncScheduler, type SchedulerLike, type Subscription } from 'rxjs';
import type { EncodedFrame } from '../../src/pipelines/jpeg.js';

/** What the sender needs of a socket: send one JPEG with its capture time, and how much is still queued. */
export interface FrameSink {
  sendFrame(jpeg: Buffer, timestampSeconds: number): boolean;
  bufferedAmount(): number;
}

export interface FrameSenderStats {
  /** Frames handed to a socket. */
  sent: number;
  /** Bytes of JPEG handed to a socket. */
  sentBytes: number;
  /** Frames replaced by a newer one while the socket was still busy with earlier ones. */
  replaced: number;
  /** Frames offered while no socket was open (video is never buffered across reconnects). */
  droppedDisconnected: number;
}

export interface FrameSenderOptions {
  /**
   * A frame is sent only while the socket holds at most this many unsent bytes (default 0: the
   * previous frame must be fully written). Above it, the frame waits as "latest" and a newer one
   * replaces it, so a slow socket never builds a queue of stale frames.
   */
  maxBufferedBytes?: number;
  /** How often a waiting frame re-checks the socket's buffer, in ms (default 10). */
  recheckMs?: number;
  scheduler?: SchedulerLike;
}

/**
 * Holds at most one frame. Rate: at most the rate frames are offered, less when the socket is slow.
 * Drop policy: latest-frame-wins on `bufferedAmount`; frames offered with no socket are dropped and
 * counted. Memory: one waiting frame, whatever the consumer's speed.
 */
export class FrameSender {
  private sink: FrameSink | undefined;
  private waiting: EncodedFrame | undefined;
  private recheck: Subscription | undefined;
  private readonly maxBuffered: number;
  private readonly recheckMs: number;
  private readonly scheduler: SchedulerLike;
  private readonly counters: FrameSenderStats = { sent: 0, sentBytes: 0, replaced: 0, droppedDisconnected: 0 };

  constructor(options: FrameSenderOptions = {}) {
    this.maxBuffered = options.maxBufferedBytes ?? 0;
    this.recheckMs = options.recheckMs ?? 10;
    this.scheduler = options.scheduler ?? asyncScheduler;
  }

  /** True while a socket is attached (the pipeline skips encoding otherwise). */
  get attached(): boolean {
    return this.sink !== undefined;
  }

  attach(sink: FrameSink): void {
    this.sink = sink;
  }

  /** Forgets the socket; a waiting frame is dropped (it would be stale after a reconnect). */
  detach(): void {
    this.sink = undefined;
    if (this.waiting) this.counters.droppedDisconnected += 1;
    this.waiting = undefined;
    this.cancelRecheck();
  }

  /** Offers the newest frame: sent now if the socket has room, else it waits, replacing an older waiting frame. */
  offer(frame: EncodedFrame): void {
    if (!this.sink) {
      this.counters.droppedDisconnected += 1;
      return;
    }
    if (this.waiting) this.counters.replaced += 1;
    this.waiting = frame;
    this.trySend();
  }

  private trySend(): void {
    const sink = this.sink;
    const frame = this.waiting;
    if (!sink || !frame) return;
    if (sink.bufferedAmount() > this.maxBuffered) {
      this.recheck ??= this.scheduler.schedule(() => {
        this.recheck = undefined;
        this.trySend();
      }, this.recheckMs);
      return;
    }
    this.waiting = undefined;
    this.cancelRecheck();
    if (sink.sendFrame(frame.jpeg, frame.capturedAt / 1000)) {
      this.counters.sent += 1;
      this.counters.sentBytes += frame.jpeg.length;
    } else {
      this.counters.droppedDisconnected += 1;
    }
  }

  private cancelRecheck(): void {
    this.recheck?.unsubscribe();
    this.recheck = undefined;
  }

  stats(): FrameSenderStats {
    return { ...this.counters };
  }
}
