// Voice activity on the robot: the WebRTC detector (libfvad as WebAssembly) and an RxJS gate that passes speech and drops silence
// The gate keeps a pre-roll before speech and a hang-over after it.
import { Observable, type OperatorFunction } from 'rxjs';
import { CortexError } from '../errors.js';

/** Rates the WebRTC detector takes directly; others are resampled to 16 kHz for detection only. */
const FVAD_RATES = [8000, 16000, 32000, 48000];

/** Classifies one frame of mono s16le PCM as speech or not. */
export interface VoiceDetector {
  readonly rate: number;
  /** Samples per frame (`frameMs` at `rate`). */
  readonly frameSamples: number;
  isSpeech(frame: Int16Array): boolean;
  close(): void;
}

type FvadModule = import('@echogarden/fvad-wasm').FvadModule;
/**
 * The WebAssembly module while detectors use it, shared by them. Its memory is 16 MB: the last
 * detector to close drops it, so a mode that listened leaves nothing behind (the next one loads it
 * again in a few ms; the module is 20 KB).
 */
let fvad: { module: Promise<FvadModule>; users: number } | undefined;

/** The shared module and this user's release (call it once, also when loading failed). */
function holdModule(): { module: Promise<FvadModule>; release(): void } {
  let held: typeof fvad = (fvad ??= {
    module: import('@echogarden/fvad-wasm')
      .then((m) => m.default())
      .catch((err: unknown) => {
        throw new CortexError('vad_unavailable', `voice activity detector not loaded: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
      }),
    users: 0,
  });
  held.users += 1;
  return {
    module: held.module,
    // Forgets the module too: a closed detector kept by its caller keeps nothing of it.
    release() {
      if (!held) return;
      held.users -= 1;
      if (held.users === 0 && fvad === held) fvad = undefined;
      held = undefined;
    },
  };
}

/** Linear resampling of one frame (detection only: the audio sent is never resampled). */
function resampleFrame(frame: Int16Array, outLength: number): Int16Array {
  if (frame.length === outLength) return frame;
  const out = new Int16Array(outLength);
  const step = frame.length / outLength;
  for (let i = 0; i < outLength; i++) {
    const pos = i * step;
    const j = Math.floor(pos);
    const a = frame[j] ?? 0;
    const b = frame[j + 1] ?? a;
    out[i] = Math.round(a + (b - a) * (pos - j));
  }
  return out;
}

/**
 * A WebRTC voice activity detector for `rate` (any rate: 8, 16, 32, 48 kHz directly, others through a
 * 16 kHz copy of each frame). `aggressiveness` 0..3: higher calls more audio non-speech (3 suits a
 * noisy robot, 0 a quiet room).
 */
export async function loadVoiceDetector(rate: number, aggressiveness = 2, frameMs = 20): Promise<VoiceDetector> {
  if (![10, 20, 30].includes(frameMs)) throw new CortexError('vad_frame', `voice detection frames are 10, 20 or 30 ms, not ${frameMs}`);
  const { module, release } = holdModule();
  let m: FvadModule;
  try {
    m = await module;
  } catch (err) {
    release();
    throw err;
  }
  const detectRate = FVAD_RATES.includes(rate) ? rate : 16000;
  const inst = m._fvad_new();
  if (!inst) {
    release();
    throw new CortexError('vad_unavailable', 'the voice activity detector could not be created');
  }
  if (m._fvad_set_sample_rate(inst, detectRate) !== 0 || m._fvad_set_mode(inst, aggressiveness) !== 0) {
    m._fvad_free(inst);
    release();
    throw new CortexError('vad_config', `voice detection does not accept rate ${detectRate} with aggressiveness ${aggressiveness}`);
  }
  const frameSamples = Math.round((rate * frameMs) / 1000);
  const detectSamples = Math.round((detectRate * frameMs) / 1000);
  const ptr = m._malloc(detectSamples * 2);
  // Dropped on close, so a closed detector kept by its caller does not keep the module's memory.
  let open: FvadModule | undefined = m;
  return {
    rate,
    frameSamples,
    isSpeech(frame) {
      if (!open) return false;
      // HEAP16 is read each time: the module's memory may have grown and replaced the view.
      open.HEAP16.set(resampleFrame(frame, detectSamples), ptr >> 1);
      return open._fvad_process(inst, ptr, detectSamples) === 1;
    },
    close() {
      if (!open) return;
      open._free(ptr);
      open._fvad_free(inst);
      open = undefined;
      release();
    },
  };
}

export interface VoiceGateOptions {
  rate: number;
  /** Makes the detector for one subscription (closed when it ends); frames that arrive before it is ready pass, so an onset is never lost. */
  detector: () => VoiceDetector | Promise<VoiceDetector>;
  /** Speech needed to open the gate (consecutive speech frames), ms. Default 60. */
  onsetMs?: number;
  /** Audio before the onset that is sent with it, so word onsets reach the recogniser, ms. Default 300. */
  preRollMs?: number;
  /** Non-speech after the last speech frame that ends the utterance (a shorter pause does not split it); it is sent, ms. Default DEFAULT_HANGOVER_MS. */
  hangoverMs?: number;
  /** The gate closed (end of speech decided; END_OF_UTTERANCE went out): `at` is when, ms since the epoch. */
  onEnd?: (at: number) => void;
  /** Largest buffer sent at once, ms (the socket's message size). Default 100. */
  chunkMs?: number;
  /** The gate opened: speech began (time of its first frame, ms since the epoch). Barge-in listens here. */
  onOnset?: (at: number) => void;
  /** A speech frame ended at `at` (the last one before silence is the end of speech). */
  onSpeech?: (at: number) => void;
  /** The detector failed to load: the gate stays open (everything is sent, as without a detector). */
  onUnavailable?: (err: unknown) => void;
  now?: () => number;
}

/**
 * Hang-over default, chosen with `node bench/voice-turn.js --sweep 100,150,200,300` (cut words against
 * latency): the WebRTC detector keeps calling a few frames speech after a word (its own overhang),
 * so a 150 ms pause inside a question was never cut even at 100 ms, while every 50 ms more is 50 ms
 * more before the final. 150 keeps a margin for slower speakers; raise it for hesitant ones.
 */
export const DEFAULT_HANGOVER_MS = 150;
/**
 * What the gate emits when it ends an utterance: an empty buffer, in order behind the utterance's audio.
 * The socket's sink says it to the recogniser its way (an explicit end, or silence to commit on).
 */
export const isEndOfUtterance = (chunk: Buffer): boolean => chunk.length === 0;

export interface VoiceGateStats {
  /** Bytes of audio passed on (speech, pre-roll, hang-over). */
  passedBytes: number;
  /** Utterances the gate ended (an end-of-utterance marker each). */
  ends?: number;
  /** Bytes of silence held back. */
  gatedBytes: number;
  onsets: number;
}

/**
 * Passes speech and drops silence. Frames of 20 ms are classified as they arrive; `onsetMs` of
 * consecutive speech opens the gate, which then sends the `preRollMs` before the onset, everything
 * while speech goes on, and `hangoverMs` after the last speech frame, then closes and emits an empty
 * buffer at once (`isEndOfUtterance`: the end of the utterance, which the recogniser is told without
 * waiting for its own endpointing). Output buffers are
 * at most `chunkMs` and are flushed when the gate closes, so an utterance's tail never waits for the
 * next one. Rate: at most one buffer per `chunkMs` of passed audio. Drop policy: silence outside the
 * pre-roll and hang-over is dropped (counted in `stats.gatedBytes`); speech never is. Once the detector
 * is loaded the gate is deterministic: the same bytes in any chunking pass the same bytes.
 */
export function voiceGate(options: VoiceGateOptions, stats: VoiceGateStats = { passedBytes: 0, gatedBytes: 0, onsets: 0 }): OperatorFunction<Buffer, Buffer> {
  const shape = gateShape(options);
  const now = options.now ?? Date.now;
  return (source) =>
    new Observable<Buffer>((subscriber) => {
      let closed = false;
      const detector = detectorOf(options, () => closed);
      const out = batcher(shape.chunkBytes, stats, (b) => subscriber.next(b));
      const gate = gateFrames(shape, options, stats, out, () => subscriber.next(Buffer.alloc(0)));
      let rest: Buffer = Buffer.alloc(0);
      const sub = source.subscribe({
        next(chunk) {
          const buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
          rest = eachFrame(buf, shape, now(), (frame, frameEnd) => {
            const d = detector.current();
            // No detector yet (loading) or none at all: everything passes.
            if (!d) gate.undetected(frame, detector.unavailable());
            else gate.classified(frame, d.isSpeech(new Int16Array(frame.buffer, frame.byteOffset, frame.length / 2)), frameEnd);
          });
          if (!detector.current()) out.flush();
        },
        error: (err) => subscriber.error(err),
        complete: () => {
          out.flush();
          subscriber.complete();
        },
      });
      return () => {
        closed = true;
        sub.unsubscribe();
        detector.current()?.close();
      };
    });
}

/** The gate's options in frames and bytes: 20 ms frames of s16le at `rate`. */
interface GateShape {
  frameMs: number;
  frameBytes: number;
  bytesPerMs: number;
  onsetFrames: number;
  preRollFrames: number;
  hangoverFrames: number;
  /** Largest output buffer: `chunkMs` rounded to whole frames, at least one. */
  chunkBytes: number;
}

function gateShape(options: VoiceGateOptions): GateShape {
  const frameMs = 20;
  const frameBytes = Math.round((options.rate * frameMs) / 1000) * 2;
  const bytesPerMs = (options.rate * 2) / 1000;
  return {
    frameMs,
    frameBytes,
    bytesPerMs,
    onsetFrames: Math.max(1, Math.ceil((options.onsetMs ?? 60) / frameMs)),
    preRollFrames: Math.ceil((options.preRollMs ?? 300) / frameMs),
    hangoverFrames: Math.ceil((options.hangoverMs ?? DEFAULT_HANGOVER_MS) / frameMs),
    chunkBytes: Math.max(frameBytes, Math.round(((options.chunkMs ?? 100) * bytesPerMs) / frameBytes) * frameBytes),
  };
}

/**
 * Calls `fn` with each whole frame of `buf` (a copy) and when its last sample was captured (the buffer
 * arrived at `arrived`, after its last byte); returns the bytes left over for the next chunk.
 */
function eachFrame(buf: Buffer, shape: GateShape, arrived: number, fn: (frame: Buffer, frameEnd: number) => void): Buffer {
  let offset = 0;
  while (buf.length - offset >= shape.frameBytes) {
    const frame = Buffer.from(buf.subarray(offset, offset + shape.frameBytes));
    offset += shape.frameBytes;
    fn(frame, arrived - (buf.length - offset) / shape.bytesPerMs);
  }
  return Buffer.from(buf.subarray(offset));
}

/**
 * The detector of one subscription: made at once, or when its promise settles (closed at once if the
 * subscription ended first). One that fails to load is unavailable: the gate stays open.
 */
function detectorOf(options: VoiceGateOptions, ended: () => boolean): { current(): VoiceDetector | undefined; unavailable(): boolean } {
  let detector: VoiceDetector | undefined;
  let unavailable = false;
  const unavailableNow = (err: unknown) => {
    unavailable = true;
    options.onUnavailable?.(err);
  };
  try {
    const made = options.detector();
    if (made instanceof Promise) made.then((d) => (ended() ? d.close() : (detector = d)), unavailableNow);
    else detector = made;
  } catch (err) {
    unavailableNow(err);
  }
  return { current: () => detector, unavailable: () => unavailable };
}

/** Passed frames gathered into buffers of at most `chunkBytes`, sent when full or flushed (counted in `stats.passedBytes`). */
interface Batcher {
  pass(frame: Buffer): void;
  flush(): void;
}

function batcher(chunkBytes: number, stats: VoiceGateStats, send: (out: Buffer) => void): Batcher {
  let batch: Buffer[] = [];
  let batchBytes = 0;
  const flush = () => {
    if (!batchBytes) return;
    const out = Buffer.concat(batch, batchBytes);
    batch = [];
    batchBytes = 0;
    stats.passedBytes += out.length;
    send(out);
  };
  return {
    flush,
    pass(frame) {
      batch.push(frame);
      batchBytes += frame.length;
      if (batchBytes >= chunkBytes) flush();
    },
  };
}

/**
 * The gate over frames. Closed, it keeps the pre-roll and counts consecutive speech frames until the
 * onset opens it (the pre-roll passes first); open, it passes every frame and counts silent ones until
 * the hang-over closes it: the batch is flushed and `sendEnd` marks the end of the utterance.
 */
function gateFrames(shape: GateShape, options: VoiceGateOptions, stats: VoiceGateStats, out: Batcher, sendEnd: () => void) {
  let open = false;
  let speechRun = 0;
  let silentFrames = 0;
  const preRoll: Buffer[] = [];
  const whileOpen = (frame: Buffer, speech: boolean, frameEnd: number) => {
    out.pass(frame);
    silentFrames = speech ? 0 : silentFrames + 1;
    if (silentFrames < shape.hangoverFrames) return;
    open = false;
    speechRun = 0;
    out.flush();
    // End of the utterance: the recogniser is told at once, not after its endpointing's real time.
    stats.ends = (stats.ends ?? 0) + 1;
    sendEnd();
    options.onEnd?.(frameEnd);
  };
  const whileClosed = (frame: Buffer, speech: boolean, frameEnd: number) => {
    preRoll.push(frame);
    speechRun = speech ? speechRun + 1 : 0;
    if (speechRun >= shape.onsetFrames) {
      open = true;
      silentFrames = 0;
      stats.onsets += 1;
      options.onOnset?.(frameEnd - shape.onsetFrames * shape.frameMs);
      for (const f of preRoll.splice(0)) out.pass(f);
      return;
    }
    if (preRoll.length > shape.preRollFrames + shape.onsetFrames) stats.gatedBytes += preRoll.shift()!.length;
  };
  return {
    /** A frame with no detector to classify it (loading, or unavailable): it passes, and opens the gate unless the detector failed. */
    undetected(frame: Buffer, unavailable: boolean) {
      if (!unavailable) open = true;
      out.pass(frame);
    },
    classified(frame: Buffer, speech: boolean, frameEnd: number) {
      if (speech) options.onSpeech?.(frameEnd);
      (open ? whileOpen : whileClosed)(frame, speech, frameEnd);
    },
  };
}
