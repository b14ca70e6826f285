// A player speaker that falls back to WAV files when the machine has no sound card (or no player): said once, then speech goes on into files.
import { BehaviorSubject } from 'rxjs';
import { DeviceError } from './device-error.js';
import { wavHeader } from './wav.js';
import { createSpeaker, type AudioClip, type PlayOptions, type PlayResult, type Speaker } from './speaker.js';

/** Raw PCM as a WAV file (a person opens `0001.wav`, not `0001.raw`); WAV and MP3 as they are. */
function asWav(clip: AudioClip): AudioClip {
  if (clip.format !== 'pcm') return clip;
  return { format: 'wav', data: Buffer.concat([wavHeader(clip.data.length, clip.rate ?? 16000), clip.data]) };
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
 * for the rest of the run, and that clip and every later one is written there. Any other failure is
 * the clip's own and is passed on. Playing-state and barge-in work the same after the switch.
 */
export function withFileFallback(player: Speaker, options: FallbackOptions): Speaker {
  if (player.binding !== 'player') return player;
  let current: Speaker = player;
  let files: Speaker | undefined;
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
  return {
    get binding() {
      return current.binding;
    },
    playing$: playing.asObservable(),
    async play(clip: AudioClip, signal?: AbortSignal, playOptions?: PlayOptions): Promise<PlayResult> {
      if (files) return files.play(asWav(clip), signal, playOptions);
      try {
        return await player.play(clip, signal, playOptions);
      } catch (err) {
        if (!(err instanceof DeviceError) || !NO_SOUND.has(err.code)) throw err;
        return fallBack(err).play(asWav(clip), signal, playOptions);
      }
    },
    stop() {
      current.stop();
    },
  };
}
