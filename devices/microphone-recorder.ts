// The recorder microphone (node-record-lpcm16: arecord/sox by name on PATH) as a device a session actor opens: one run of the program is one link.
import { createRequire } from 'node:module';
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { Subject, type Observable } from 'rxjs';
import type { Logger } from 'pino';
import { DeviceError } from './device-error.js';
import { LinkEnd, type OpenableDevice } from './device-link.js';
import { KEPT_OUTPUT, lastLine, noAudioDevice } from '../src/device-output.js';
import type { StreamLink } from '../src/cloud/link.js';
import type { Microphone } from './microphone-interface.js';
import type { RecorderMicrophoneConfig } from '../src/plugins/schemas/devices.js';

interface Recording {
  process: ChildProcess;
  stream(): Readable;
}
const requireCjs = createRequire(import.meta.url);
const recordLib = requireCjs('node-record-lpcm16') as { record(options: Record<string, unknown>): Recording };

/** The close code of a link whose recorder ended (1006 with a reason: the engine says the reason as it is). */
const RECORDER_ENDED = 1006;

/**
 * A recorder's end in our words, from its exit and what it printed: no capture device at all is
 * `microphone_no_device` (fatal: reopening cannot help); otherwise how it ended and its last line.
 * What it printed is the error's `detail`.
 */
export function recorderExit(recorder: string, exit: { code: number | null; signal: string | null }, output: string): DeviceError {
  const detail = output.trim();
  if (noAudioDevice(output)) {
    return new DeviceError('microphone', `no microphone (${recorder} found no capture device)`, { code: 'microphone_no_device', detail, fatal: true });
  }
  const how = exit.signal
    ? `was stopped (${exit.signal})`
    : exit.code === 0
      ? 'exited (code 0) and stopped sending audio'
      : `exited with code ${String(exit.code)}`;
  const last = lastLine(output);
  return new DeviceError('microphone', `${recorder} ${how}${last ? `: ${last}` : ''}`, detail ? { detail } : undefined);
}

/**
 * A recorder failure in our words from the library's error (its text "... has exited with error code
 * 1. Enable debugging with the environment variable DEBUG=record." is replaced, see `recorderExit`),
 * or from a spawn error: a program not on PATH is fatal (`microphone_no_recorder`).
 */
export function recorderFailure(recorder: string, err: unknown, context: string, output: string): DeviceError {
  const exited = typeof err === 'string' ? /has exited with error code (\d+)/.exec(err) : null;
  if (exited || noAudioDevice(output)) return recorderExit(recorder, { code: exited ? Number(exited[1]) : 1, signal: null }, output);
  if ((err as { code?: unknown } | null)?.code === 'ENOENT') {
    return new DeviceError('microphone', `${recorder} is not installed (not found on PATH)`, { code: 'microphone_no_recorder', cause: err, fatal: true });
  }
  const e = DeviceError.from('microphone', err, context);
  const detail = output.trim();
  return detail ? new DeviceError('microphone', e.message.replace(/^microphone: /, ''), { code: e.code, cause: err, detail }) : e;
}

/** One run of the recorder as a link: its PCM on `pcm$`, its exit as the link's `close`. */
interface RecorderLink extends StreamLink {
  readonly pcm$: Observable<Buffer>;
}

const isRecorderLink = (link: StreamLink): link is RecorderLink => 'pcm$' in link;

/**
 * Starts the recorder once. Resolves when the program has spawned; rejects (typed) when it cannot run
 * or `signal` aborts first. The link's `close` comes when the program exits, with the reason in our
 * words (`fatal` when there is no capture device); `close()` kills it. Its first audio proves the run
 * healthy (`LinkEnd.proven`): the engine counts only runs without audio toward giving up.
 */
function openRecording(
  config: Pick<RecorderMicrophoneConfig, 'recorder' | 'device' | 'rate'>,
  signal: AbortSignal,
  logger: Logger | undefined,
): Promise<RecorderLink> {
  return new Promise<RecorderLink>((resolve, reject) => {
    if (signal.aborted) return reject(new DeviceError('microphone', 'opening cancelled'));
    let recording: Recording;
    try {
      recording = recordLib.record({ recorder: config.recorder, device: config.device, sampleRate: config.rate, channels: 1, audioType: 'raw' });
    } catch (err) {
      return reject(recorderFailure(config.recorder, err, `cannot start ${config.recorder}`, ''));
    }
    const proc = recording.process;
    const stream = recording.stream();
    const pcm$ = new Subject<Buffer>();
    const ends = new LinkEnd();
    let output = '';
    let spawned = false;
    let closing = false;
    proc.stderr?.on('data', (d: Buffer | string) => (output = (output + d.toString()).slice(-KEPT_OUTPUT)));
    stream.on('data', (chunk: Buffer | string) => {
      ends.proven();
      pcm$.next(typeof chunk === 'string' ? Buffer.from(chunk, 'binary') : chunk);
    });
    // The library reports a non-zero exit as an error string on the stream: the close below says it in our words.
    stream.on('error', () => undefined);
    const kill = () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill();
    };
    const onAbort = () => {
      closing = true;
      kill();
      reject(new DeviceError('microphone', 'opening cancelled'));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    proc.once('spawn', () => {
      spawned = true;
      signal.removeEventListener('abort', onAbort);
      resolve(link);
    });
    proc.on('error', (err) => {
      // Before the spawn: the program could not run. After it, a close follows.
      if (spawned) return;
      signal.removeEventListener('abort', onAbort);
      closing = true;
      reject(recorderFailure(config.recorder, err, `cannot run ${config.recorder}`, output));
    });
    proc.once('close', (code: number | null, sig: NodeJS.Signals | null) => {
      pcm$.complete();
      if (closing || !spawned) return;
      const error = recorderExit(config.recorder, { code, signal: sig }, output);
      if (error.detail) logger?.debug({ device_output: error.detail }, 'microphone output');
      ends.end({ type: 'close', code: RECORDER_ENDED, reason: error.message, ...(error.fatal ? { fatal: true } : {}) });
    });
    const link: RecorderLink = {
      pcm$: pcm$.asObservable(),
      bufferedAmount: () => 0,
      // An exit between the spawn and this subscription is not lost.
      subscribe: (listener) => ends.subscribe(listener),
      close() {
        closing = true;
        kill();
      },
    };
  });
}

/**
 * The recorder binding. Its program runs while a session actor holds the device open
 * (`device.connect`); the actor reopens it with the engine's backoff and breaker when it exits, and
 * stops in `failed` on a fatal end (no capture device, no recorder program) or, by the engine's count,
 * once `max_restarts` runs in a row brought no audio. `pcm()` is hot: the audio of whichever run is open.
 */
export function createRecorderMicrophone(config: RecorderMicrophoneConfig, logger?: Logger): Microphone {
  const heard = new Subject<Buffer>();
  const device: OpenableDevice = {
    connect: (signal) => openRecording(config, signal, logger),
    attach: (link) => {
      if (!isRecorderLink(link)) throw new DeviceError('microphone', 'not a recorder link');
      const sub = link.pcm$.subscribe((pcm) => heard.next(pcm));
      return () => sub.unsubscribe();
    },
    backoff: { initialMs: config.restart_initial_ms, maxMs: config.restart_max_ms },
    // Only audio proves a run: a recorder that runs silent and exits counts toward max_restarts however long it ran.
    health: 'data',
    ...(config.max_restarts !== undefined ? { giveUp: { after: config.max_restarts, what: 'with no audio' } } : {}),
  };
  return { binding: 'recorder', rate: config.rate, hearsPage: false, device, pcm: () => heard.asObservable() };
}
