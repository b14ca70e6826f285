// The microphone: the Microphone interface, and the real binding (node-record-lpcm16: arecord/sox by name on PATH).
import { createRequire } from 'node:module';
import type { ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { Observable, Subject } from 'rxjs';
import type { Logger } from 'pino';
import { DeviceError, withRestarts } from './device-error.js';
import { KEPT_OUTPUT, lastLine, noAudioDevice } from '../src/device-output.js';
import { createReplayMicrophone } from './microphone-replay.js';
import { createWebSimMicrophone, withBrowserMicrophone } from './microphone-browser.js';
import type { BrowserAudio } from '../src/cortex/browser-audio.js';
import { MicrophoneConfigSchema, type MicrophoneConfig, type RecorderMicrophoneConfig } from '../src/plugins/schemas/devices.js';

export {
  MicrophoneConfigSchema,
  RecorderMicrophoneSchema,
  ReplayMicrophoneSchema,
  type MicrophoneConfig,
  type RecorderMicrophoneConfig,
  type ReplayMicrophoneConfig,
  type WebSimMicrophoneConfig,
} from '../src/plugins/schemas/devices.js';

/** Mono signed 16-bit little-endian PCM at `rate`. */
export interface Microphone {
  readonly binding: 'recorder' | 'replay' | 'websim';
  readonly rate: number;
  /**
   * Cold: each subscription starts capturing, unsubscribing stops (kills the recorder). Buffers have
   * any size (chunk them with `chunkPcm`). The recorder binding restarts a failed recorder with
   * backoff; the stream errors only when `max_restarts` is exhausted.
   */
  pcm(): Observable<Buffer>;
  /** Every failure that caused a restart. */
  readonly failures$: Observable<DeviceError>;
}

export interface DeviceContext {
  logger?: Logger;
  /** The agent's browser voice link: the `websim` binding hears it, and the others give way to it while a page streams. */
  browser?: BrowserAudio;
}

interface Recording {
  process: ChildProcess;
  stream(): Readable;
  stop(): void;
}
const requireCjs = createRequire(import.meta.url);
const recordLib = requireCjs('node-record-lpcm16') as { record(options: Record<string, unknown>): Recording };

/**
 * A recorder failure in our words. The library's own text ("... has exited with error code 1. Enable
 * debugging with the environment variable DEBUG=record.") is replaced: no capture device at all is
 * `microphone_no_device`; otherwise the recorder's last line. What it printed is the error's `detail`.
 */
export function recorderFailure(recorder: string, err: unknown, context: string, output: string): DeviceError {
  const detail = output.trim();
  const exited = typeof err === 'string' ? /has exited with error code (\d+)/.exec(err) : null;
  if (noAudioDevice(output))
    return new DeviceError('microphone', `no microphone (${recorder} found no capture device)`, { code: 'microphone_no_device', detail });
  if (exited) {
    const last = lastLine(output);
    return new DeviceError('microphone', `${recorder} exited with code ${exited[1]}${last ? `: ${last}` : ''}`, { ...(detail ? { detail } : {}) });
  }
  const e = DeviceError.from('microphone', err, context);
  return detail ? new DeviceError('microphone', e.message.replace(/^microphone: /, ''), { code: e.code, cause: err, detail }) : e;
}

/** One run of the recorder program: errors (typed) when it fails to start, exits, or reports an error string. */
export function recordOnce(config: Pick<RecorderMicrophoneConfig, 'recorder' | 'device' | 'rate'>): Observable<Buffer> {
  return new Observable<Buffer>((subscriber) => {
    let stopped = false;
    let recording: Recording;
    try {
      recording = recordLib.record({
        recorder: config.recorder,
        device: config.device,
        sampleRate: config.rate,
        channels: 1,
        audioType: 'raw',
      });
    } catch (err) {
      subscriber.error(DeviceError.from('microphone', err, `cannot start ${config.recorder}`));
      return;
    }
    let output = '';
    recording.process.stderr?.on('data', (d: Buffer | string) => (output = (output + d.toString()).slice(-KEPT_OUTPUT)));
    const fail = (err: unknown, context: string) => {
      if (!stopped) subscriber.error(recorderFailure(config.recorder, err, context, output));
    };
    const stream = recording.stream();
    const onData = (chunk: Buffer | string) => subscriber.next(typeof chunk === 'string' ? Buffer.from(chunk, 'binary') : chunk);
    const onError = (err: unknown) => fail(err, config.recorder);
    const onSpawnError = (err: unknown) => fail(err, `cannot run ${config.recorder}`);
    // The library reports a non-zero exit as an error string on the stream; a clean exit is ours to report.
    const onClose = (code: number | null, signal: string | null) =>
      fail(`${config.recorder} exited (code ${String(code)}${signal ? `, signal ${signal}` : ''}) and stopped sending audio`, 'recorder ended');
    stream.on('data', onData);
    stream.on('error', onError);
    recording.process.on('close', onClose);
    recording.process.on('error', onSpawnError);
    return () => {
      stopped = true;
      stream.off('data', onData);
      recording.process.off('close', onClose);
      recording.process.off('error', onSpawnError);
      // Errors after our own kill (the lib reports the signal exit as an error string) are expected.
      stream.on('error', () => {});
      recording.process.on('error', () => {});
      if (recording.process.exitCode === null && !recording.process.killed) recording.process.kill();
    };
  });
}

function createRecorderMicrophone(config: RecorderMicrophoneConfig, ctx: DeviceContext): Microphone {
  const failures = new Subject<DeviceError>();
  return {
    binding: 'recorder',
    rate: config.rate,
    failures$: failures.asObservable(),
    pcm: () =>
      withRestarts(
        'microphone',
        () => recordOnce(config),
        { initialMs: config.restart_initial_ms, maxMs: config.restart_max_ms, maxRestarts: config.max_restarts },
        failures,
        ctx.logger,
      ),
  };
}

/**
 * Builds the microphone a config names (validated here, so a bad block fails before anything spawns).
 * With the agent's browser link in `ctx`, a recorder or replay microphone hears the WebSim page instead
 * while a page streams (devices/microphone-browser.ts).
 */
export function createMicrophone(config: MicrophoneConfig, ctx: DeviceContext = {}): Microphone {
  const parsed = MicrophoneConfigSchema.parse(config);
  if (parsed.binding === 'websim') return createWebSimMicrophone(parsed, ctx.browser);
  const device = parsed.binding === 'recorder' ? createRecorderMicrophone(parsed, ctx) : createReplayMicrophone(parsed);
  return withBrowserMicrophone(device, ctx.browser, ctx.logger);
}
