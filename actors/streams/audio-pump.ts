// The data plane of an ASR session: chunked audio flows to the open socket, or into a bounded ring while there is none.
import { BehaviorSubject, type Observable, type Subscription } from 'rxjs';
import { PcmRingBuffer, gateWithRing, type RingStats } from '../../src/pipelines/ring-buffer.js';

/** What the pump needs of a socket: send one chunk of PCM; false when it could not. */
export interface AudioSink {
  sendAudio(pcm: Buffer): boolean;
}

export interface PumpStats extends RingStats {
  /** Bytes handed to a socket. */
  sentBytes: number;
  /** Bytes a socket refused (closing under us); they go back to the ring, so this counts retries, not loss. */
  requeuedBytes: number;
  /** Bytes of keepalive silence sent while the source was idle (metered like audio by the service). */
  silenceBytes: number;
}

/**
 * Subscribes to `audio$` (already chunked) from `start()` to `stop()`. With a sink attached, chunks
 * go to it in order (the ring first); detached, they wait in the ring (capacity `ringBytes`, oldest
 * dropped and counted). A chunk the sink refuses goes back to the ring. PCM never leaves this object
 * except into the sink. Keepalive: `sendSilence()` sends one chunk of zeros when audio is idle.
 */
export class AudioPump {
  private readonly ring: PcmRingBuffer;
  private readonly open$ = new BehaviorSubject(false);
  private sink: AudioSink | undefined;
  private sub: Subscription | undefined;
  private sent = 0;
  private requeued = 0;
  private silence = 0;
  private lastSendAt = 0;
  /** What ended the audio source, if it failed. */
  sourceError: unknown;

  constructor(
    private readonly audio$: Observable<Buffer>,
    ringBytes: number,
    private readonly now: () => number = Date.now,
  ) {
    this.ring = new PcmRingBuffer(ringBytes);
  }

  start(): void {
    if (this.sub) return;
    // A source error ends the pump (the owner handles it upstream); it must never become an unhandled error.
    this.sub = this.audio$.pipe(gateWithRing(this.open$, this.ring)).subscribe({
      next: (chunk) => this.deliver(chunk),
      error: (err: unknown) => (this.sourceError = err),
    });
  }

  private deliver(chunk: Buffer): void {
    const sink = this.sink;
    if (sink && sink.sendAudio(chunk)) {
      this.sent += chunk.length;
      this.lastSendAt = this.now();
      return;
    }
    this.requeued += chunk.length;
    this.ring.push(chunk);
    if (this.open$.value) this.open$.next(false);
  }

  attach(sink: AudioSink): void {
    this.sink = sink;
    this.lastSendAt = this.now();
    this.open$.next(true);
  }

  detach(): void {
    this.sink = undefined;
    this.open$.next(false);
  }

  /** Sends `bytes` of silence if nothing was sent for `idleMs`; returns whether it did. */
  sendSilence(bytes: number, idleMs: number): boolean {
    if (!this.sink || this.now() - this.lastSendAt < idleMs) return false;
    const ok = this.sink.sendAudio(Buffer.alloc(bytes));
    if (ok) {
      this.lastSendAt = this.now();
      this.silence += bytes;
    }
    return ok;
  }

  stats(): PumpStats {
    return { ...this.ring.stats(), sentBytes: this.sent, requeuedBytes: this.requeued, silenceBytes: this.silence };
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.sub = undefined;
    this.detach();
  }
}
