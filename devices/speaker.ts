// The speaker: plays PCM/WAV/MP3 through aplay, paplay or ffplay found on PATH, or into a file/null sink; playback can be interrupted.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { findOnPath } from '../src/which.js';

export { findOnPath };
import { appendFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BehaviorSubject, type Observable } from 'rxjs';
import { DeviceError } from './device-error.js';
import { KEPT_OUTPUT, lastLine, noAudioDevice } from '../src/device-output.js';
import { isWav, parseWav } from './wav.js';
import { PLAYERS, SpeakerConfigSchema, type PlayerName, type SpeakerConfig } from '../src/plugins/schemas/devices.js';

export { PLAYERS, SpeakerConfigSchema, type PlayerName, type SpeakerConfig } from '../src/plugins/schemas/devices.js';

export interface AudioClip {
  /** The audio, or its first bytes when `more` follows. */
  data: Buffer;
  format: 'wav' | 'mp3' | 'pcm';
  /** Sample rate of `pcm` clips (mono s16le). */
  rate?: number;
  /** The rest of a clip that is still being synthesised: played as it arrives (the first sound does not wait for the end). */
  more?: AsyncIterable<Buffer>;
}

export interface PlayResult {
  /** False when `stop()` or the signal interrupted it. */
  completed: boolean;
  durationMs: number;
}

export interface PlayOptions {
  /** Called when the clip starts playing (after the clips queued before it), with the time in ms since the epoch. */
  onStart?: (at: number) => void;
}

export interface Speaker {
  readonly binding: 'player' | 'file' | 'null';
  /** Plays one clip after those already queued; resolves when it ends or is interrupted. */
  play(clip: AudioClip, signal?: AbortSignal, options?: PlayOptions): Promise<PlayResult>;
  /** Interrupts the clip playing and drops the queued ones (barge-in). */
  stop(): void;
  /** True while a clip is playing: the microphone pipeline mutes on it. */
  readonly playing$: Observable<boolean>;
}

/** Duration of a clip in ms: exact for WAV/PCM, an estimate at 128 kbit/s for MP3. */
export function clipDurationMs(clip: AudioClip): number {
  if (clip.format === 'mp3') return (clip.data.length * 8) / 128;
  if (clip.format === 'wav' && isWav(clip.data)) {
    const w = parseWav(clip.data);
    return (w.data.length * 1000) / (w.rate * w.channels * (w.bitsPerSample / 8));
  }
  return (clip.data.length * 1000) / ((clip.rate ?? 16000) * 2);
}

/** Program and arguments that play `clip` from stdin. */
export function playerCommand(player: PlayerName, clip: AudioClip, device?: string): { cmd: string; args: string[] } {
  const rate = String(clip.rate ?? 16000);
  switch (player) {
    case 'aplay':
      if (clip.format === 'mp3') throw new DeviceError('speaker', 'aplay cannot play MP3; install ffplay or use WAV/PCM', { code: 'speaker_format' });
      return {
        cmd: 'aplay',
        args: [...(device ? ['-D', device] : []), '-q', ...(clip.format === 'pcm' ? ['-t', 'raw', '-f', 'S16_LE', '-c', '1', '-r', rate] : []), '-'],
      };
    case 'paplay':
      if (clip.format === 'mp3') throw new DeviceError('speaker', 'paplay cannot play MP3; install ffplay or use WAV/PCM', { code: 'speaker_format' });
      return { cmd: 'paplay', args: clip.format === 'pcm' ? ['--raw', '--format=s16le', '--channels=1', `--rate=${rate}`] : [] };
    case 'ffplay':
      return {
        cmd: 'ffplay',
        args: ['-nodisp', '-autoexit', '-loglevel', 'error', ...(clip.format === 'pcm' ? ['-f', 's16le', '-ar', rate, '-ac', '1'] : []), '-i', 'pipe:0'],
      };
  }
}

function choosePlayer(configured: PlayerName | undefined, clip: AudioClip): PlayerName {
  if (configured) return configured;
  const order: readonly PlayerName[] = clip.format === 'mp3' ? ['ffplay'] : PLAYERS;
  const found = order.find((p) => findOnPath(p));
  if (!found) throw new DeviceError('speaker', `no audio player on PATH (looked for ${order.join(', ')})`, { code: 'speaker_unavailable' });
  return found;
}

/**
 * A player that exited with an error, in our words: no audio device at all is `speaker_no_device`
 * ("no sound card", so the speech connector can fall back to files); anything else names the player,
 * its code and its last line. The whole output is the error's `detail`.
 */
export function playerFailure(cmd: string, code: number | null, output: string): DeviceError {
  const detail = output.trim();
  if (noAudioDevice(output)) return new DeviceError('speaker', `no sound card (${cmd} found no audio device)`, { code: 'speaker_no_device', detail });
  const last = lastLine(output);
  return new DeviceError('speaker', `${cmd} exited with code ${String(code)}${last ? `: ${last}` : ''}`, { ...(detail ? { detail } : {}) });
}

/** Clip files of a file sink (`0001.wav`...), oldest first. */
function numberedClips(dir: string): Array<{ n: number; file: string }> {
  return readdirSync(dir)
    .map((file) => ({ file, m: /^(\d+)\.[a-z0-9]+$/.exec(file) }))
    .filter((x): x is { file: string; m: RegExpExecArray } => x.m !== null)
    .map((x) => ({ n: Number(x.m[1]), file: x.file }))
    .sort((a, b) => a.n - b.n);
}

/** Deletes the oldest clips beyond `keep`. A file that vanished meanwhile is not an error. */
function pruneClips(dir: string, keep: number): void {
  const clips = numberedClips(dir);
  for (const c of clips.slice(0, Math.max(0, clips.length - keep))) rmSync(join(dir, c.file), { force: true });
}

export function createSpeaker(config: SpeakerConfig): Speaker {
  const parsed = SpeakerConfigSchema.parse(config);
  const playing = new BehaviorSubject(false);
  let generation = 0;
  let queue: Promise<unknown> = Promise.resolve();
  let interruptCurrent: (() => void) | undefined;
  let clipCount = 0;
  if (parsed.binding === 'file') {
    mkdirSync(parsed.dir, { recursive: true });
    // Numbering goes on after the clips already there, so a new speaker never overwrites them.
    clipCount = Math.max(0, ...numberedClips(parsed.dir).map((c) => c.n));
  }

  const runPlayer = (clip: AudioClip, onInterrupt: (fn: () => void) => void) =>
    new Promise<boolean>((resolve, reject) => {
      if (parsed.binding !== 'player') return resolve(true);
      const { cmd, args } = playerCommand(choosePlayer(parsed.player, clip), clip, parsed.device);
      const child: ChildProcess = spawn(cmd, args, { stdio: ['pipe', 'ignore', 'pipe'] });
      let interrupted = false;
      let exited = false;
      const gone = new Promise<void>((r) => child.once('close', () => ((exited = true), r())));
      let stderr = '';
      child.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-KEPT_OUTPUT)));
      child.stdin?.on('error', () => {}); // EPIPE when interrupted mid-write
      child.on('error', (err) => reject(DeviceError.from('speaker', err, `cannot run ${cmd}`)));
      child.on('close', (code) => {
        if (interrupted) resolve(false);
        else if (code === 0) resolve(true);
        else reject(playerFailure(cmd, code, stderr));
      });
      onInterrupt(() => {
        interrupted = true;
        child.kill('SIGTERM');
      });
      if (!clip.more) return void child.stdin?.end(clip.data);
      const more = clip.more;
      void (async () => {
        child.stdin?.write(clip.data);
        try {
          // A player that exited (no sound card) reads no more: the rest stays in `more` for whoever plays it instead.
          for await (const chunk of more) {
            if (interrupted || exited) break;
            if (child.stdin && !child.stdin.write(chunk)) await Promise.race([new Promise((r) => child.stdin!.once('drain', r)), gone]);
            if (exited) break;
          }
          child.stdin?.end();
        } catch (err) {
          interrupted || child.kill('SIGTERM');
          reject(err);
        }
      })();
    });

  const waitDuration = (ms: number, onInterrupt: (fn: () => void) => void) =>
    new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(true), ms);
      onInterrupt(() => {
        clearTimeout(timer);
        resolve(false);
      });
    });

  /** The whole of a streamed clip (file and null sinks), read as it arrives. */
  const drain = async (clip: AudioClip, write?: (chunk: Buffer) => Promise<void>): Promise<AudioClip> => {
    if (!clip.more) return clip;
    const chunks = [clip.data];
    for await (const chunk of clip.more) {
      chunks.push(chunk);
      await write?.(chunk);
    }
    return { data: Buffer.concat(chunks), format: clip.format, ...(clip.rate !== undefined ? { rate: clip.rate } : {}) };
  };

  const playNow = async (clip: AudioClip, myGeneration: number, signal?: AbortSignal, options?: PlayOptions): Promise<PlayResult> => {
    let durationMs = clipDurationMs(clip);
    if (myGeneration !== generation || signal?.aborted) return { completed: false, durationMs };
    const onInterrupt = (fn: () => void) => {
      interruptCurrent = fn;
    };
    const onAbort = () => interruptCurrent?.();
    signal?.addEventListener('abort', onAbort, { once: true });
    playing.next(true);
    const startedAt = Date.now();
    options?.onStart?.(startedAt);
    try {
      if (parsed.binding === 'file') {
        const ext = clip.format === 'pcm' ? 'raw' : clip.format;
        const path = join(parsed.dir, `${String(++clipCount).padStart(4, '0')}.${ext}`);
        await writeFile(path, clip.data);
        clip = await drain(clip, (chunk) => appendFile(path, chunk));
        pruneClips(parsed.dir, parsed.keep);
        // Interrupted while the file was written: it does not "play" on.
        if (myGeneration !== generation || signal?.aborted) return { completed: false, durationMs };
      } else if (parsed.binding === 'null') clip = await drain(clip);
      durationMs = clipDurationMs(clip);
      // A streamed clip "plays" from its first byte: what is left of its duration once all of it is here.
      const completed =
        parsed.binding === 'player'
          ? await runPlayer(clip, onInterrupt)
          : parsed.realtime
            ? await waitDuration(Math.max(0, durationMs - (Date.now() - startedAt)), onInterrupt)
            : true;
      return { completed, durationMs };
    } finally {
      interruptCurrent = undefined;
      signal?.removeEventListener('abort', onAbort);
      playing.next(false);
    }
  };

  return {
    binding: parsed.binding,
    playing$: playing.asObservable(),
    play(clip, signal, options) {
      const myGeneration = generation;
      const result = queue.then(() => playNow(clip, myGeneration, signal, options));
      queue = result.catch(() => undefined);
      return result;
    },
    stop() {
      generation += 1;
      interruptCurrent?.();
    },
  };
}
