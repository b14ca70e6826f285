// The data plane of an ASR session: chunked audio flows to the open socket, or into a bounded ring while there is none.
import { BehaviorSubject, type Observable, type Subscription } from 'rxjs';
import { PcmRingBuffer, gateWithRing, type RingStats } from '../../src/pipelines/ring-buffer.js';

/** What the pump needs of a socket: send one chunk of PCM; false when it could not. */
export interface AudioSink {
  sendAudio(pcm: Buffer): boolean;
  /** Tells the recogniser an utterance ended: true sent, false not open, undefined when the peer takes no explicit end. */
  endUtterance?(): boolean | undefined;
}

export interface PumpStats extends RingStats {
  /** Bytes handed to a socket. */
  sentBytes: number;
  /** Bytes a socket refused (closing under us); they go back to the ring, so this counts retries, not loss. */
  requeuedBytes: number;
  /** Bytes of keepalive silence sent while the source was idle (metered like audio by the service). */
  silenceBytes: number;
  /** Utterance ends told to the recogniser as an explicit end (a peer that announced it takes one). */
  endsSent: number;
  /** Bytes of zeros sent at ends of utterances to a peer that commits on silence (in sentBytes too). */
  commitBytes: number;
}

/**
 * Subscribes to `audio$` (already chunked) from `start()` to `stop()`. With a sink attached, chunks
 * go to it in order (the ring first); detached, they wait in the ring (capacity `ringBytes`, oldest
 * dropped and counted). A chunk the sink refuses goes back to the ring. PCM never leaves this object
 * except into the sink. Keepalive: `sendSilence()` sends one chunk of zeros when audio is idle.
 * An empty chunk is the end of an utterance (voice-gate.ts): a sink whose peer takes an explicit end
 * gets `endUtterance()`, any other `commitBytes` of zeros (its endpointing commits on them at once).
 */
export class AudioPump {
  private readonly ring: PcmRingBuffer;
  private readonly open$ = new BehaviorSubject(false);
  private sink: AudioSink | undefined;
  private sub: Subscription | undefined;
  private sent = 0;
  private requeued = 0;
  private silence = 0;
  private ends = 0;
  private padded = 0;
  private lastSendAt = 0;
  /** What ended the audio source, if it failed. */
  sourceError: unknown;

  constructor(
    private readonly audio$: Observable<Buffer>,
    ringBytes: number,
    private readonly now: () => number = Date.now,
    private readonly commitBytes = 0,
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
    if (chunk.length === 0) return this.deliverEnd(chunk, sink);
    if (sink?.sendAudio(chunk)) {
      this.sent += chunk.length;
      this.lastSendAt = this.now();
      return;
    }
    this.requeued += chunk.length;
    this.ring.push(chunk);
    if (this.open$.value) this.open$.next(false);
  }

  /** The end of an utterance: an explicit end where the peer takes one, else the padding its endpointing commits on. */
  private deliverEnd(marker: Buffer, sink: AudioSink | undefined): void {
    const told = sink?.endUtterance?.();
    if (told === true) {
      this.ends += 1;
      this.lastSendAt = this.now();
      return;
    }
    if (sink && told === undefined && (this.commitBytes === 0 || sink.sendAudio(Buffer.alloc(this.commitBytes)))) {
      this.sent += this.commitBytes;
      this.padded += this.commitBytes;
      if (this.commitBytes) this.lastSendAt = this.now();
      return;
    }
    // No socket, or it is closing: the end waits in the ring behind the audio it ends.
    this.ring.push(marker);
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
    return {
      ...this.ring.stats(),
      sentBytes: this.sent,
      requeuedBytes: this.requeued,
      silenceBytes: this.silence,
      endsSent: this.ends,
      commitBytes: this.padded,
    };
  }

  stop(): void {
    this.sub?.unsubscribe();
    this.sub = undefined;
    this.detach();
  }
}
