// The speak connectors that make sound: speechlab_tts and speechb_tts (hosted service), local_tts (espeak-ng), all played by the speaker device.
import { spawn } from 'node:child_process';
import type { z } from 'zod';
import { CortexError, describeError } from '../../../src/errors.js';
import type { ActionConnector, ActionContext, ConnectorFactory } from '../../../src/cortex/action.js';
import { LocalTtsOptions, SpeechbTtsOptions, SpeechlabTtsOptions } from '../../../src/plugins/schemas/actions.js';
import { createSpeaker, type AudioClip, type SpeakerConfig } from '../../../devices/speaker.js';
import { isWav } from '../../../devices/wav.js';

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

/** espeak-ng to a WAV in memory; the child is killed when `signal` aborts. */
export function espeak(text: string, options: { command: string; voice: string; speed: number }, signal: AbortSignal): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    signal.throwIfAborted();
    const child = spawn(options.command, ['-v', options.voice, '-s', String(options.speed), '--stdout', '--', text], { stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    const onAbort = () => child.kill('SIGKILL');
    signal.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (c: Buffer) => chunks.push(c));
    child.stderr.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-300)));
    child.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(new CortexError('tts_local', `cannot run ${options.command}: ${describeError(err)}`));
    });
    child.on('close', (code) => {
      signal.removeEventListener('abort', onAbort);
      if (signal.aborted) reject(signal.reason);
      else if (code === 0) resolve(Buffer.concat(chunks));
      else reject(new CortexError('tts_local', `${options.command} exited with code ${String(code)}: ${stderr.trim()}`));
    });
  });
}

type Synth<O> = (sentence: string, options: O, ctx: ActionContext, signal: AbortSignal) => Promise<AudioClip>;

/** A connector that synthesises the sentence, then plays it; aborting stops synthesis or playback. */
function speakingConnector<S extends z.ZodType<{ speaker: SpeakerConfig }>>(type: string, schema: S, synth: Synth<z.output<S>>): ConnectorFactory {
  return (config, ctx): ActionConnector => {
    const options = schema.parse(config ?? {});
    const speaker = createSpeaker(options.speaker);
    return {
      name: type,
      async run(value, signal) {
        const sentence = (value as { sentence: string }).sentence;
        const clip = await synth(sentence, options, ctx, signal);
        signal.throwIfAborted();
        const result = await speaker.play(clip, signal);
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
  async (sentence, o, ctx, signal) => {
    const res = await cloudOf(ctx, 'speechlab_tts').tts.speechlab(
      {
        input: sentence,
        response_format: o.response_format,
        ...(o.voice ? { voice: o.voice } : {}),
        ...(o.model ? { model: o.model } : {}),
        ...(o.speed !== undefined ? { speed: o.speed } : {}),
      },
      { signal },
    );
    return clipFromFormat(res.audio, res.format || o.response_format);
  },
);

export const createSpeechbTtsConnector = speakingConnector(
  'speechb_tts',
  SpeechbTtsOptions,
  async (sentence, o, ctx, signal) => {
    const res = await cloudOf(ctx, 'speechb_tts').tts.speechb(
      { text: sentence, ...(o.voice ? { voice: o.voice } : {}), ...(o.language_code ? { language_code: o.language_code } : {}) },
      { signal },
    );
    return clipFromFormat(res.audio, undefined);
  },
);

export const createLocalTtsConnector = speakingConnector(
  'local_tts',
  LocalTtsOptions,
  async (sentence, o, _ctx, signal) => ({ data: await espeak(sentence, o, signal), format: 'wav' }),
);
