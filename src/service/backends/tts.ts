// Speech-synthesis backends: warm espeak-ng streaming its own format (through ffmpeg for others), or another hosted-API-compatible service upstream.
import { spawn, spawnSync } from 'node:child_process';
import { Readable, Transform } from 'node:stream';
import type { TtsBackendConfig } from '../options.js';
import { ESPEAK_RATE, espeakArgs, WAV_HEADER_BYTES, WarmEspeak } from '../../warm-espeak.js';
import { BackendError } from './chat.js';

export { WarmEspeak };

export interface AudioFormat {
  /** The format string as requested, e.g. `mp3_44100_128`, `pcm_16000`, `wav_22050`. */
  name: string;
  container: 'mp3' | 'pcm' | 'wav';
  rate: number;
  /** kbit/s for mp3. */
  bitrate?: number;
  contentType: string;
}

const MP3_RATES = [22050, 24000, 44100, 48000];
const PCM_RATES = [8000, 16000, 22050, 24000, 44100, 48000];

/**
 * Supported formats: `mp3_<22050|24000|44100|48000>_<32..320>`, `pcm_<8000..48000>` (raw s16le mono),
 * `wav_<rate>` (16-bit mono WAV). Anything else is unsupported (the spec's 400).
 */
export function parseAudioFormat(name: string): AudioFormat | undefined {
  let m = /^mp3_(\d+)_(\d+)$/.exec(name);
  if (m) {
    const rate = Number(m[1]);
    const bitrate = Number(m[2]);
    if (!MP3_RATES.includes(rate) || bitrate < 32 || bitrate > 320) return undefined;
    return { name, container: 'mp3', rate, bitrate, contentType: 'audio/mpeg' };
  }
  m = /^(pcm|wav)_(\d+)$/.exec(name);
  if (m && PCM_RATES.includes(Number(m[2]))) {
    const container = m[1] as 'pcm' | 'wav';
    return { name, container, rate: Number(m[2]), contentType: container === 'wav' ? 'audio/wav' : 'audio/pcm' };
  }
  return undefined;
}

export interface SynthesisRequest {
  text: string;
  format: AudioFormat;
  /** 0.5..2.0, 1 = espeak-ng's 175 words per minute. */
  speed: number;
  /** espeak-ng voice name (`en-us`, `fr`, `en+f3`); anything else falls back to en-us. */
  voice?: string;
  /** Per-request vendor key (upstream backend only). */
  vendorKey?: string;
  /** The original JSON request, forwarded as is by the upstream backend. */
  original: Record<string, unknown>;
}

export interface Synthesis {
  contentType: string;
  format: string;
  audio: Readable;
}

let voices: Set<string> | undefined;
/** Language names espeak-ng knows (`espeak-ng --voices`, read once). */
function espeakVoices(): Set<string> {
  if (voices) return voices;
  const out = spawnSync('espeak-ng', ['--voices'], { encoding: 'utf8' }).stdout ?? '';
  voices = new Set(
    out
      .split('\n')
      .slice(1)
      .map((l) => l.trim().split(/\s+/)[1]?.toLowerCase())
      .filter((v): v is string => !!v),
  );
  return voices;
}

/**
 * The espeak-ng voice for a requested voice id or language code: `en-US` becomes `en-us`, a variant
 * such as `en+f3` is kept; anything espeak-ng does not know (the spec's default voice id) is en-us.
 */
export function espeakVoice(voice: string | undefined): string {
  const v = voice?.toLowerCase().replace(/_/g, '-');
  if (!v) return 'en-us';
  const [lang, variant] = v.split('+');
  const known = espeakVoices();
  if (lang && known.has(lang)) return variant ? `${lang}+${variant}` : lang;
  const bare = lang?.split('-')[0];
  return bare && known.has(bare) ? bare : 'en-us';
}

/** Drops the first `n` bytes of a stream. */
function skipBytes(n: number): Transform {
  let left = n;
  return new Transform({
    transform(chunk: Buffer, _enc, done) {
      if (left >= chunk.length) {
        left -= chunk.length;
        return done();
      }
      const out = left ? chunk.subarray(left) : chunk;
      left = 0;
      done(null, out);
    },
  });
}

/**
 * espeak-ng writes WAV to stdout as it synthesises. `pcm_22050` and `wav_22050` (its own format) are
 * passed on as they come (the header dropped for pcm); other formats go through ffmpeg, which streams
 * too. Both die with `signal`.
 */
function espeak(req: SynthesisRequest, signal: AbortSignal, warm?: WarmEspeak): Synthesis {
  const wpm = Math.round(175 * req.speed);
  const voice = espeakVoice(req.voice);
  const tts = warm ? warm.take(voice, wpm) : spawn('espeak-ng', espeakArgs(voice, wpm), { stdio: ['pipe', 'pipe', 'ignore'] });
  const onAbort = (): void => void tts.kill();
  signal.addEventListener('abort', onAbort, { once: true });
  tts.on('exit', () => signal.removeEventListener('abort', onAbort));
  tts.stdin!.on('error', () => undefined);
  tts.stdin!.end(req.text.replace(/\r?\n/g, ' '));
  const f = req.format;
  const native = f.rate === ESPEAK_RATE && f.container !== 'mp3';
  let audio: Readable;
  if (native) {
    audio = f.container === 'pcm' ? tts.stdout!.pipe(skipBytes(WAV_HEADER_BYTES)) : tts.stdout!;
    tts.stdout!.on('error', (err) => audio.destroy(err));
  } else {
    const out =
      f.container === 'mp3'
        ? ['-f', 'mp3', '-ar', String(f.rate), '-ac', '1', '-b:a', `${f.bitrate}k`]
        : f.container === 'wav'
          ? ['-f', 'wav', '-ar', String(f.rate), '-ac', '1', '-c:a', 'pcm_s16le']
          : ['-f', 's16le', '-ar', String(f.rate), '-ac', '1', '-c:a', 'pcm_s16le'];
    const ff = spawn('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', 'pipe:0', ...out, 'pipe:1'], {
      stdio: ['pipe', 'pipe', 'ignore'],
      signal,
    });
    tts.on('error', () => ff.kill());
    ff.on('error', () => tts.kill());
    tts.stdout!.pipe(ff.stdin);
    ff.stdin.on('error', () => undefined);
    audio = ff.stdout;
    ff.on('exit', (code) => {
      if (code !== 0 && code !== null) audio.destroy(new Error(`ffmpeg exited with ${code}`));
    });
  }
  tts.on('exit', (code) => {
    if (code !== 0 && code !== null) audio.destroy(new Error(`espeak-ng exited with ${code}`));
  });
  tts.on('error', (err) => audio.destroy(err));
  return { contentType: f.contentType, format: f.name, audio };
}

/** Forwards the request to `<baseUrl>/speechlab/tts/audio/speech` of another compatible service. */
async function upstream(vendor: string, baseUrl: string, key: string | undefined, req: SynthesisRequest, signal: AbortSignal): Promise<Synthesis> {
  const apiKey = req.vendorKey ?? key;
  if (!apiKey) throw new BackendError(503, `${vendor} API key not configured`);
  const { speechlab_api_key: _drop, ...body } = req.original;
  let res: Response;
  try {
    res = await fetch(`${baseUrl.replace(/\/+$/, '')}/speechlab/tts/audio/speech`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: JSON.stringify(body),
      signal,
    });
  } catch (err) {
    if (signal.aborted) throw err;
    throw new BackendError(
      503,
      `Failed to connect to ${vendor} server`,
      err instanceof Error ? ((err.cause as Error | undefined)?.message ?? err.message) : String(err),
    );
  }
  if (!res.ok || !res.body) {
    const text = await res.text().catch(() => '');
    throw new BackendError(503, `Failed to connect to ${vendor} server`, `upstream status ${res.status}: ${text.slice(0, 300)}`);
  }
  return {
    contentType: res.headers.get('content-type') ?? req.format.contentType,
    format: req.format.name,
    audio: Readable.fromWeb(res.body as import('node:stream/web').ReadableStream),
  };
}

/** Synthesises `req`; `warm` (the service's) keeps espeak-ng processes ready so none starts on the way. */
export async function synthesize(
  vendor: 'speechlab' | 'speechb',
  cfg: TtsBackendConfig,
  req: SynthesisRequest,
  signal: AbortSignal,
  warm?: WarmEspeak,
): Promise<Synthesis> {
  return cfg.kind === 'upstream' ? upstream(vendor, cfg.baseUrl, cfg.apiKey, req, signal) : espeak(req, signal, warm);
}
