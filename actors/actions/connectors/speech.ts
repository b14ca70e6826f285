// The speak connectors that make sound (speechlab_tts, speechb_tts, local_tts): sentences synthesised ahead, played in order by the speaker.
import type { Readable } from 'node:stream';
import type { z } from 'zod';
import { CortexError, describeError } from '../../../src/errors.js';
import type { ActionConnector, ActionContext, CommandJob, ConnectorFactory } from '../../../src/cortex/action.js';
import { ttsCost } from '../../../src/cloud/prices.js';
import { LocalTtsOptions, SpeechbTtsOptions, SpeechlabTtsOptions } from '../../../src/plugins/schemas/actions.js';
import { createSpeaker, type AudioClip, type SpeakerConfig } from '../../../devices/speaker.js';
import { join } from 'node:path';
import { withFileFallback } from '../../../devices/speaker-fallback.js';
import { withBrowserSpeech } from '../../../devices/speaker-browser.js';
import { isWav } from '../../../devices/wav.js';
import { WarmEspeak, WAV_HEADER_BYTES } from '../../../src/warm-espeak.js';

/** Audio container of a `format` name the hosted API returns (`pcm_22050`, `wav_22050`, `mp3_44100_128`). */
export function clipFromFormat(audio: Buffer, format: string | undefined): AudioClip {
  const pcm = /^pcm_(\d+)$/.exec(format ?? '');
  if (pcm) return { data: audio, format: 'pcm', rate: Number(pcm[1]) };
  if (isWav(audio)) return { data: audio, format: 'wav' };
  if ((format ?? '').startsWith('mp3') || audio.subarray(0, 3).toString('latin1') === 'ID3' || (audio[0] === 0xff && ((audio[1] ?? 0) & 0xe0) === 0xe0)) {
    return { data: audio, format: 'mp3' };
  }
  throw new CortexError('tts_format', `cannot tell the audio format of a ${audio.length}-byte clip (${format ?? 'no format given'})`);
}

/**
 * A sentence spoken by a warm espeak-ng (started ahead, waiting on stdin): its WAV streams out as it
 * is made. The child is killed when `signal` aborts; a program that cannot run or fails ends the
 * stream with a `tts_local` error naming it.
 */
export function espeakStream(warm: WarmEspeak, text: string, options: { command: string; voice: string; speed: number }, signal: AbortSignal): Readable {
  signal.throwIfAborted();
  const child = warm.take(options.voice, options.speed);
  const audio = child.stdout!;
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-300)));
  const onAbort = (): void => void child.kill('SIGKILL');
  signal.addEventListener('abort', onAbort, { once: true });
  child.on('exit', () => signal.removeEventListener('abort', onAbort));
  child.on('error', (err) => audio.destroy(new CortexError('tts_local', `cannot run ${options.command}: ${describeError(err)}`)));
  child.on('exit', (code) => {
    if (code !== 0 && code !== null && !signal.aborted)
      audio.destroy(new CortexError('tts_local', `${options.command} exited with code ${String(code)}${stderr.trim() ? `: ${stderr.trim()}` : ''}`));
  });
  child.stdin!.end(`${text.replace(/\r?\n/g, ' ')}\n`);
  return audio;
}

/**
 * A clip that is ready at its first bytes: the rest follows in `more` as the service sends it, so the
 * speaker starts on the first sound, not on the end of the synthesis. Closing the stream (an
 * interruption, an abort) closes the connection.
 */
export async function streamedClip(audio: Readable, format: string | undefined, signal: AbortSignal, firstByte: () => void): Promise<AudioClip> {
  const it = audio[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const broke = (err: unknown): never => {
    audio.destroy();
    if (signal.aborted) throw signal.reason;
    if (err instanceof CortexError) throw err;
    throw new CortexError('tts_stream', `speech stream broke: ${describeError(err)}`, { cause: err });
  };
  let first: IteratorResult<Buffer>;
  try {
    first = await it.next();
    // A WAV's header may come in pieces: the clip's format is read from a whole one.
    while (!first.done && (format ?? '').startsWith('wav') && first.value.length < WAV_HEADER_BYTES) {
      const next = await it.next();
      if (next.done) break;
      first = { done: false, value: Buffer.concat([first.value, next.value]) };
    }
  } catch (err) {
    return broke(err);
  }
  if (first.done) throw new CortexError('tts_stream', 'the speech stream ended without audio');
  firstByte();
  async function* more(): AsyncGenerator<Buffer> {
    try {
      for (;;) {
        const next = await it.next().catch(broke);
        if (next.done) return;
        yield next.value;
      }
    } finally {
      audio.destroy();
    }
  }
  return { ...clipFromFormat(first.value, format), more: more() };
}

type Synth<O> = (sentence: string, options: O, ctx: ActionContext, signal: AbortSignal, firstByte: () => void) => Promise<AudioClip>;

/** Syntheses one connector runs at once; later sentences wait their turn (in order), so a long answer cannot flood the service. */
const SYNTHESES_AT_ONCE = 2;

/** A first-in first-out limit of `n` tasks at once; a waiting task whose signal aborts leaves the line. */
export class TaskLine {
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly n: number) {}

  async run<T>(task: () => Promise<T>, signal: AbortSignal): Promise<T> {
    if (this.running >= this.n) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.waiting.indexOf(go);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal.reason);
        };
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        this.waiting.push(go);
      });
    }
    this.running += 1;
    try {
      return await task();
    } finally {
      this.running -= 1;
      this.waiting.shift()?.();
    }
  }
}

/** What `prepare` hands to `run`: the clip being synthesised (its rejection is handled; `run` awaits it). */
interface PreparedSpeech {
  clip: Promise<AudioClip>;
}

/**
 * A connector that synthesises the sentence, then plays it; aborting stops synthesis or playback.
 * Synthesis starts when a sentence is queued (`prepare`), at most SYNTHESES_AT_ONCE at a time in queue
 * order, so while one sentence plays the next is being made and starts as soon as the first ends:
 * clips play in order, one after another, without waiting for synthesis. A dropped or interrupted
 * sentence aborts its synthesis; nothing of it is played. Marks: the first audio byte of each
 * synthesis (`tts_first_byte`), the start and end of its playback.
 */
function speakingConnector<S extends z.ZodType<{ speaker: SpeakerConfig }>>(
  type: string,
  schema: S,
  synth: Synth<z.output<S>>,
  price?: (sentence: string) => number,
): ConnectorFactory {
  return (config, ctx): ActionConnector => {
    const options = schema.parse(config ?? {});
    // No sound card (a container, CI, a robot before its speaker is wired): speech goes on into files, said once.
    // Either way the WebSim pages that listen play each sentence too.
    const speaker = withBrowserSpeech(
      withFileFallback(createSpeaker(options.speaker), {
        dir: join(ctx.stateDir, 'speech'),
        onFallback: (line, detail) => {
          // Marked, so the view leaves it out when its start line already said there is no sound card.
          ctx.logger.warn({ speaker_fallback: true }, line);
          if (detail) ctx.logger.debug({ device_output: detail }, 'speaker output');
        },
      }),
      ctx.browserAudio,
    );
    const line = new TaskLine(SYNTHESES_AT_ONCE);
    const synthesise = (sentence: string, signal: AbortSignal, job?: Omit<CommandJob, 'prepared'>): Promise<AudioClip> => {
      let first = false;
      const firstByte = () => {
        if (!first) (first = true), job?.mark?.('tts_first_byte', Date.now());
      };
      return line.run(async () => {
        const clip = await synth(sentence, options, ctx, signal, firstByte);
        // The service charges a synthesis it answered, whether or not the clip is played.
        if (price) job?.charge?.(price(sentence));
        return clip;
      }, signal);
    };
    return {
      name: type,
      prepare(value, signal, job): PreparedSpeech {
        const clip = synthesise((value as { sentence: string }).sentence, signal, job);
        clip.catch(() => undefined);
        return { clip };
      },
      async run(value, signal, job) {
        const sentence = (value as { sentence: string }).sentence;
        const prepared = job?.prepared as PreparedSpeech | undefined;
        const clip = await (prepared?.clip ?? synthesise(sentence, signal, job));
        signal.throwIfAborted();
        const result = await speaker.play(clip, signal, { onStart: (at) => job?.mark?.('playback_start', at) });
        job?.mark?.('playback_end', Date.now());
        if (!result.completed) throw signal.aborted ? signal.reason : new CortexError('speak_interrupted', 'playback interrupted');
      },
      async stop() {
        speaker.stop();
      },
    };
  };
}

function cloudOf(ctx: ActionContext, type: string) {
  if (!ctx.cloud) throw new CortexError('speak_no_service', `${type} needs the hosted or embedded service, and none is configured`);
  return ctx.cloud;
}

/** The speak connectors (their descriptors are in src/plugins/actions.ts). */
export const createSpeechlabTtsConnector = speakingConnector(
  'speechlab_tts',
  SpeechlabTtsOptions,
  async (sentence, o, ctx, signal, firstByte) => {
    // The binary streaming endpoint: bytes arrive as they are made (the first one is the latency that counts).
    const res = await cloudOf(ctx, 'speechlab_tts').tts.speechlabStream(
      {
        input: sentence,
        response_format: o.response_format,
        ...(o.voice ? { voice: o.voice } : {}),
        ...(o.model ? { model: o.model } : {}),
        ...(o.speed !== undefined ? { speed: o.speed } : {}),
      },
      { signal },
    );
    return streamedClip(res.audio, o.response_format, signal, firstByte);
  },
  (sentence) => ttsCost('speechlab', [...sentence].length),
);

export const createSpeechbTtsConnector = speakingConnector(
  'speechb_tts',
  SpeechbTtsOptions,
  async (sentence, o, ctx, signal, firstByte) => {
    const res = await cloudOf(ctx, 'speechb_tts').tts.speechb(
      { text: sentence, ...(o.voice ? { voice: o.voice } : {}), ...(o.language_code ? { language_code: o.language_code } : {}) },
      { signal },
    );
    firstByte();
    return clipFromFormat(res.audio, undefined);
  },
  (sentence) => ttsCost('speechb', [...sentence].length),
);

/**
 * espeak-ng on the robot, warm (one process per voice and speed waiting for its text, shared with the
 * local service's synthesis: src/warm-espeak.ts) and streamed: the clip plays from its first bytes.
 * The warm processes belong to the connector and stop with it.
 */
export const createLocalTtsConnector: ConnectorFactory = (config, ctx) => {
  const options = LocalTtsOptions.parse(config ?? {});
  const warm = new WarmEspeak({ command: options.command, stderr: 'pipe' });
  warm.prewarm(options.voice, options.speed);
  const inner = speakingConnector('local_tts', LocalTtsOptions, (sentence, o, _ctx, signal, firstByte) =>
    streamedClip(espeakStream(warm, sentence, o, signal), 'wav_22050', signal, firstByte),
  )(config, ctx);
  return {
    ...inner,
    async stop() {
      warm.close();
      await inner.stop();
    },
  };
};
