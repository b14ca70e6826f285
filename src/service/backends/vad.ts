// Pure audio helpers for recognition: an energy voice-activity detector over s16le PCM, and linear resampling to 16 kHz.

export interface VadOptions {
  /** Sample rate of the PCM fed in. */
  rate: number;
  /** Frame length in ms (energy is measured per frame). Default 20. */
  frameMs?: number;
  /** RMS (on the s16 scale) above which a frame is speech. Default 400 (about -38 dBFS). */
  threshold?: number;
  /** Consecutive speech frames that start an utterance. Default 3 (60 ms). */
  startFrames?: number;
  /** Silence that ends an utterance, in ms. Default 500. */
  endSilenceMs?: number;
  /** Audio kept before the detected start so the first phoneme is not cut, in ms. Default 200. */
  preRollMs?: number;
  /** An utterance longer than this is committed anyway, in ms. Default 15000. */
  maxUtteranceMs?: number;
}

export type VadEvent =
  | { type: 'start' }
  /** More speech of the current utterance; `pcm` is the whole utterance so far. */
  | { type: 'speech'; pcm: Buffer; speechMs: number }
  | { type: 'end'; pcm: Buffer };

/** RMS of s16le samples. */
export function rms(pcm: Buffer): number {
  const n = Math.floor(pcm.length / 2);
  if (n === 0) return 0;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const s = pcm.readInt16LE(i * 2);
    sum += s * s;
  }
  return Math.sqrt(sum / n);
}

/**
 * Splits a PCM stream into utterances by frame energy. Deterministic: the same bytes in any chunking
 * give the same events. Frames are cut from an internal remainder, so odd chunk sizes are fine.
 */
export class EnergyVad {
  private readonly frameBytes: number;
  private readonly threshold: number;
  private readonly startFrames: number;
  private readonly endFrames: number;
  private readonly preRollFrames: number;
  private readonly maxFrames: number;
  private readonly frameMs: number;
  private rest = Buffer.alloc(0);
  private preRoll: Buffer[] = [];
  private utterance: Buffer[] = [];
  private inSpeech = false;
  private loudRun = 0;
  private quietRun = 0;

  constructor(opts: VadOptions) {
    this.frameMs = opts.frameMs ?? 20;
    this.frameBytes = Math.round((opts.rate * this.frameMs) / 1000) * 2;
    this.threshold = opts.threshold ?? 400;
    this.startFrames = opts.startFrames ?? 3;
    this.endFrames = Math.ceil((opts.endSilenceMs ?? 500) / this.frameMs);
    this.preRollFrames = Math.ceil((opts.preRollMs ?? 200) / this.frameMs);
    this.maxFrames = Math.ceil((opts.maxUtteranceMs ?? 15_000) / this.frameMs);
  }

  get speaking(): boolean {
    return this.inSpeech;
  }

  /** Feeds PCM; returns the events it caused, in order. */
  push(chunk: Buffer): VadEvent[] {
    const events: VadEvent[] = [];
    let buf = this.rest.length ? Buffer.concat([this.rest, chunk]) : chunk;
    let grew = false;
    while (buf.length >= this.frameBytes) {
      const frame = buf.subarray(0, this.frameBytes);
      buf = buf.subarray(this.frameBytes);
      const loud = rms(frame) >= this.threshold;
      if (!this.inSpeech) {
        this.preRoll.push(Buffer.from(frame));
        this.loudRun = loud ? this.loudRun + 1 : 0;
        if (this.preRoll.length > this.preRollFrames + this.startFrames) this.preRoll.shift();
        if (this.loudRun >= this.startFrames) {
          this.inSpeech = true;
          this.quietRun = 0;
          this.utterance = this.preRoll;
          this.preRoll = [];
          events.push({ type: 'start' });
          grew = true;
        }
        continue;
      }
      this.utterance.push(Buffer.from(frame));
      grew = true;
      this.quietRun = loud ? 0 : this.quietRun + 1;
      if (this.quietRun >= this.endFrames || this.utterance.length >= this.maxFrames) {
        events.push({ type: 'end', pcm: Buffer.concat(this.utterance) });
        this.reset();
        grew = false;
      }
    }
    this.rest = Buffer.from(buf);
    if (grew && this.inSpeech) events.push({ type: 'speech', pcm: Buffer.concat(this.utterance), speechMs: this.utterance.length * this.frameMs });
    return events;
  }

  /** Ends the current utterance now (session restart, socket close); undefined when not in speech. */
  flush(): Buffer | undefined {
    const pcm = this.inSpeech && this.utterance.length ? Buffer.concat(this.utterance) : undefined;
    this.reset();
    this.rest = Buffer.alloc(0);
    return pcm;
  }

  private reset(): void {
    this.inSpeech = false;
    this.utterance = [];
    this.preRoll = [];
    this.loudRun = 0;
    this.quietRun = 0;
  }
}

/** Linear-interpolation resampling of s16le mono PCM (good enough for speech recognition). */
export function resampleS16(pcm: Buffer, from: number, to: number): Buffer {
  if (from === to) return pcm;
  const n = Math.floor(pcm.length / 2);
  const outN = Math.floor((n * to) / from);
  const out = Buffer.alloc(outN * 2);
  for (let i = 0; i < outN; i++) {
    const pos = (i * from) / to;
    const j = Math.floor(pos);
    const frac = pos - j;
    const a = j < n ? pcm.readInt16LE(j * 2) : 0;
    const b = j + 1 < n ? pcm.readInt16LE((j + 1) * 2) : a;
    out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(a + (b - a) * frac))), i * 2);
  }
  return out;
}
