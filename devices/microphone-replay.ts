// The simulated microphone: replays a WAV or raw PCM file, once or looped, in real time or as fast as possible.
import { readFile } from 'node:fs/promises';
import { Observable, asyncScheduler, type SchedulerLike } from 'rxjs';
import { DeviceError } from './device-error.js';
import { isWav, parseWav } from './wav.js';
import type { Microphone } from './microphone-interface.js';
import type { ReplayMicrophoneConfig } from '../src/plugins/schemas/devices.js';

/** The PCM of a replay file and its rate (from the WAV header, else the configured rate). */
export async function loadPcm(file: string, rate: number): Promise<{ pcm: Buffer; rate: number }> {
  let buf: Buffer;
  try {
    buf = await readFile(file);
  } catch (err) {
    throw DeviceError.from('microphone', err, `cannot read ${file}`);
  }
  if (!isWav(buf)) return { pcm: buf.subarray(0, buf.length - (buf.length % 2)), rate };
  const wav = parseWav(buf);
  if (wav.bitsPerSample !== 16 || wav.channels !== 1) {
    throw new DeviceError('microphone', `${file}: need 16-bit mono PCM, got ${wav.bitsPerSample}-bit ${wav.channels}-channel`, { code: 'wav_invalid' });
  }
  return { pcm: wav.data, rate: wav.rate };
}

/**
 * Emits `pcm` in buffers of `periodMs`. In real time the byte count follows the clock exactly
 * (bytes due = elapsed * rate * 2, in whole samples), so timer jitter never speeds up or slows down
 * the audio. Looping restarts at byte 0; once, it completes after the last byte.
 */
export function replayPcm(
  pcm: Buffer,
  options: { rate: number; loop: boolean; realtime: boolean; periodMs: number; scheduler?: SchedulerLike },
): Observable<Buffer> {
  const scheduler = options.scheduler ?? asyncScheduler;
  const bytesPerMs = (options.rate * 2) / 1000;
  const chunk = Math.max(2, Math.floor((bytesPerMs * options.periodMs) / 2) * 2);
  return new Observable<Buffer>((subscriber) => {
    if (pcm.length === 0) {
      subscriber.error(new DeviceError('microphone', 'replay file holds no audio', { code: 'wav_invalid' }));
      return;
    }
    let pos = 0;
    let sent = 0;
    const take = (n: number): boolean => {
      while (n > 0) {
        if (pos >= pcm.length) {
          if (!options.loop) {
            subscriber.complete();
            return false;
          }
          pos = 0;
        }
        const part = pcm.subarray(pos, Math.min(pcm.length, pos + n));
        pos += part.length;
        sent += part.length;
        n -= part.length;
        subscriber.next(part);
      }
      if (!options.loop && pos >= pcm.length) {
        subscriber.complete();
        return false;
      }
      return true;
    };
    if (!options.realtime) {
      const action = scheduler.schedule(function () {
        if (take(chunk) && !subscriber.closed) this.schedule(undefined, 0);
      });
      return () => action.unsubscribe();
    }
    const start = scheduler.now();
    const action = scheduler.schedule(function () {
      const due = Math.floor(((scheduler.now() - start) * bytesPerMs) / 2) * 2;
      const ok = due - sent > 0 ? take(due - sent) : true;
      if (ok && !subscriber.closed) this.schedule(undefined, options.periodMs);
    }, options.periodMs);
    return () => action.unsubscribe();
  });
}

export function createReplayMicrophone(config: ReplayMicrophoneConfig, scheduler?: SchedulerLike): Microphone {
  return {
    binding: 'replay',
    rate: config.rate,
    hearsPage: false,
    pcm: () =>
      new Observable<Buffer>((subscriber) => {
        let inner: { unsubscribe(): void } | undefined;
        let closed = false;
        loadPcm(config.file, config.rate).then(
          (loaded) => {
            if (closed) return;
            if (loaded.rate !== config.rate) {
              subscriber.error(
                new DeviceError('microphone', `${config.file} is ${loaded.rate} Hz but the microphone is configured for ${config.rate} Hz`, {
                  code: 'wav_invalid',
                }),
              );
              return;
            }
            inner = replayPcm(loaded.pcm, { rate: loaded.rate, loop: config.loop, realtime: config.realtime, periodMs: config.period_ms, scheduler }).subscribe(
              subscriber,
            );
          },
          (err: unknown) => subscriber.error(err),
        );
        return () => {
          closed = true;
          inner?.unsubscribe();
        };
      }),
  };
}
