// A player speaker that falls back to WAV files when the machine has no sound card (or no player): said once, then speech goes on into files.
import { BehaviorSubject } from 'rxjs';
import { DeviceError } from './device-error.js';
import { wavHeader } from './wav.js';
import { createSpeaker, type AudioClip, type PlayOptions, type PlayResult, type Speaker } from './speaker.js';

/**
 * A streamed clip that can be read again from its start: the player reads `clip`, and if it fails, `whole()`
 * gives every byte, those the player already took and the rest, in order. Reading the rest through
 * `whole()` after the player stopped reading is what a fallback does; the two never read at once.
 */
function rereadable(clip: AudioClip): { clip: AudioClip; whole: () => Promise<Buffer> } {
  if (!clip.more) return { clip, whole: async () => clip.data };
  const source = clip.more[Symbol.asyncIterator]();
  const taken: Buffer[] = [clip.data];
  let finished = false;
  // One read at a time, in order, each kept before anyone sees it.
  let reading: Promise<unknown> = Promise.resolve();
  const pull = (): Promise<IteratorResult<Buffer>> => {
    const next = reading.then(async () => {
      if (finished) return { done: true, value: undefined } as IteratorResult<Buffer>;
      const r = await source.next();
      if (r.done) finished = true;
      else taken.push(r.value);
      return r;
    });
    reading = next.catch(() => undefined);
    return next;
  };
  const more: AsyncIterable<Buffer> = {
    // The player's copy: ending it early (the player failed) leaves the source open for `whole()`.
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const r = await pull();
        if (r.done) return;
        yield r.value;
      }
    },
  };
  return {
    clip: { ...clip, more },
    whole: async () => {
      while (!(await pull()).done);
      return Buffer.concat(taken);
    },
  };
}

/** Raw PCM as a WAV file (a person opens `0001.wav`, not `0001.raw`); WAV and MP3 as they are. */
function asWav(format: AudioClip['format'], data: Buffer, rate: number | undefined): AudioClip {
  if (format !== 'pcm') return { format, data };
  const pcm = data.subarray(0, data.length - (data.length % 2));
  return { format: 'wav', data: Buffer.concat([wavHeader(pcm.length, rate ?? 16000), pcm]) };
}

/** Failures that mean "this machine cannot play sound at all", as opposed to one clip failing. */
const NO_SOUND = new Set(['speaker_no_device', 'speaker_unavailable']);

export interface FallbackOptions {
  /** Where clips go after the fallback (`<state dir>/speech`). */
  dir: string;
  /** Called once, at the fallback, with the line to show (`no sound card: speech saved to DIR instead`) and the device's own output. */
  onFallback: (line: string, detail: string | undefined) => void;
}

/**
 * Wraps a `player` speaker: the first clip that fails because there is no audio device (ALSA finds no
 * card, no PulseAudio server, no player on PATH) switches this speaker to a `file` speaker in `dir`
 * for the rest of the run, and that clip and every later one is written there, whole: a clip still
 * being synthesised is read to its end first (so whoever copies its stream, such as the WebSim page's
 * speech, gets all of it), and raw PCM becomes a WAV file with its true size. Any other failure is
 * the clip's own and is passed on. Playing-state and barge-in work the same after the switch.
 */
export function withFileFallback(player: Speaker, options: FallbackOptions): Speaker {
  if (player.binding !== 'player') return player;
  let current: Speaker = player;
  let files: Speaker | undefined;
  // Bumped by stop(): a clip read to its end while the speaker was stopped is not played after.
  let generation = 0;
  const playing = new BehaviorSubject(false);
  player.playing$.subscribe((p) => current === player && playing.next(p));
  const fallBack = (err: DeviceError): Speaker => {
    if (!files) {
      files = createSpeaker({ binding: 'file', dir: options.dir, keep: 100, realtime: true });
      files.playing$.subscribe((p) => playing.next(p));
      current = files;
      const reason = err.code === 'speaker_unavailable' ? 'no audio player' : 'no sound card';
      options.onFallback(`${reason}: speech saved to ${options.dir} instead`, err.detail);
    }
    return files;
  };
  const toFile = async (sink: Speaker, clip: AudioClip, whole: () => Promise<Buffer>, signal?: AbortSignal, playOptions?: PlayOptions): Promise<PlayResult> => {
    const mine = generation;
    const data = await whole();
    if (mine !== generation || signal?.aborted) return { completed: false, durationMs: 0 };
    return sink.play(asWav(clip.format, data, clip.rate), signal, playOptions);
  };
  return {
    get binding() {
      return current.binding;
    },
    playing$: playing.asObservable(),
    async play(clip: AudioClip, signal?: AbortSignal, options?: PlayOptions): Promise<PlayResult> {
      const copy = rereadable(clip);
      // A clip starts once: the player may have started it before it found no sound card.
      let started = false;
      const playOptions: PlayOptions = { onStart: (at) => started || ((started = true), options?.onStart?.(at)) };
      if (files) return toFile(files, clip, copy.whole, signal, playOptions);
      try {
        return await player.play(copy.clip, signal, playOptions);
      } catch (err) {
        if (!(err instanceof DeviceError) || !NO_SOUND.has(err.code)) throw err;
        return toFile(fallBack(err), clip, copy.whole, signal, playOptions);
      }
    },
    stop() {
      generation += 1;
      current.stop();
    },
  };
}
