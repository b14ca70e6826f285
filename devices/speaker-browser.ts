// A speaker that also sends what it plays to the WebSim pages that listen: one clip per sentence, and a stop when playback is interrupted (barge-in).
import type { BrowserAudio, BrowserClip } from '../src/cortex/browser-audio.js';
import { clipDurationMs, type AudioClip, type PlayOptions, type PlayResult, type Speaker } from './speaker.js';
import { isWav, parseWav, wavHeader } from './wav.js';

/** Largest clip a page is sent, in bytes (about 45 s of 22 kHz speech): a longer one is played on the robot only. */
export const MAX_BROWSER_CLIP_BYTES = 2 * 1024 * 1024;

/**
 * A whole clip as a file a browser plays: PCM is wrapped as WAV; a WAV is re-headed with its true
 * size (espeak-ng and streamed WAVs carry a placeholder size); MP3 as it is. Undefined when too large.
 */
export function browserClip(format: AudioClip['format'], data: Buffer, rate: number | undefined): Omit<BrowserClip, 'id'> | undefined {
  if (data.length > MAX_BROWSER_CLIP_BYTES) return undefined;
  if (format === 'mp3') return { mime: 'audio/mpeg', data, durationMs: clipDurationMs({ format, data }) };
  if (format === 'pcm') {
    const pcm = data.subarray(0, data.length - (data.length % 2));
    return {
      mime: 'audio/wav',
      data: Buffer.concat([wavHeader(pcm.length, rate ?? 16000), pcm]),
      durationMs: clipDurationMs({ format, data: pcm, rate: rate ?? 16000 }),
    };
  }
  if (!isWav(data)) return undefined;
  try {
    const w = parseWav(data);
    if (w.bitsPerSample !== 16) return { mime: 'audio/wav', data, durationMs: clipDurationMs({ format, data }) };
    return { mime: 'audio/wav', data: Buffer.concat([wavHeader(w.data.length, w.rate, w.channels), w.data]), durationMs: clipDurationMs({ format, data }) };
  } catch {
    return undefined;
  }
}

/** The rest of a streamed clip, passed through while a copy of every byte is kept. */
async function* copying(more: AsyncIterable<Buffer>, kept: Buffer[], done: () => void): AsyncGenerator<Buffer> {
  for await (const chunk of more) {
    kept.push(chunk);
    yield chunk;
  }
  done();
}

/**
 * Wraps `speaker` so the WebSim pages that listen hear the robot too: each clip is sent when it starts
 * playing (a streamed clip once its last byte arrived, so the page gets one playable file per
 * sentence); a clip that ends interrupted, and `stop()`, send `stop`, which silences the pages. With
 * no page listening nothing is copied.
 */
export function withBrowserSpeech(speaker: Speaker, browser: BrowserAudio | undefined): Speaker {
  if (!browser) return speaker;
  return {
    get binding() {
      return speaker.binding;
    },
    playing$: speaker.playing$,
    async play(clip: AudioClip, signal?: AbortSignal, options?: PlayOptions): Promise<PlayResult> {
      if (browser.listening === 0) return speaker.play(clip, signal, options);
      const send = (data: Buffer) => {
        const out = browserClip(clip.format, data, clip.rate);
        if (out) browser.speak(out);
      };
      let played = clip;
      if (clip.more) {
        const kept: Buffer[] = [clip.data];
        played = { ...clip, more: copying(clip.more, kept, () => send(Buffer.concat(kept))) };
      }
      const result = await speaker.play(played, signal, {
        onStart: (at) => {
          options?.onStart?.(at);
          if (!clip.more) send(clip.data);
        },
      });
      if (!result.completed) browser.stopSpeech();
      return result;
    },
    stop() {
      speaker.stop();
      browser.stopSpeech();
    },
  };
}
