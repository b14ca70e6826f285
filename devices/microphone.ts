// The microphone: the Microphone interface, and the binding a config names (recorder, replay, an RTSP stream, the WebSim page).
import type { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { OpenableDevice } from './device-link.js';
import { createRecorderMicrophone } from './microphone-recorder.js';
import { createReplayMicrophone } from './microphone-replay.js';
import { createRtspMicrophone } from './microphone-rtsp.js';
import { createWebSimMicrophone, withBrowserMicrophone } from './microphone-browser.js';
import type { BrowserAudio } from '../src/cortex/browser-audio.js';
import { MicrophoneConfigSchema, type MicrophoneConfig } from '../src/plugins/schemas/devices.js';

export { recorderExit, recorderFailure } from './microphone-recorder.js';
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
  readonly binding: 'recorder' | 'replay' | 'websim' | 'rtsp';
  readonly rate: number;
  /**
   * The audio. Buffers have any size (chunk them with `chunkPcm`). Replay and WebSim: cold, each
   * subscription starts capturing, unsubscribing stops it; a replay that cannot read its file errors.
   * Recorder: hot, the audio of the recorder `device` runs while a session actor holds it open (it never errors).
   */
  pcm(): Observable<Buffer>;
  /**
   * A device to open and reopen (the recorder program): its owner runs it in a session actor of the
   * one reconnect engine (the ASR input's child `device:microphone`), which reopens it with the
   * backoff and breaker of src/backoff.ts. Absent for bindings with nothing to reopen.
   */
  readonly device?: OpenableDevice;
  /** The agent's WebSim page is heard too while it streams: a device that fails for good leaves the page to hear. */
  readonly hearsPage: boolean;
}

export interface DeviceContext {
  logger?: Logger;
  /** The agent's browser voice link: the `websim` binding hears it, and the others give way to it while a page streams. */
  browser?: BrowserAudio;
}

/**
 * Builds the microphone a config names (validated here, so a bad block fails before anything spawns).
 * With the agent's browser link in `ctx`, a recorder or replay microphone hears the WebSim page instead
 * while a page streams (devices/microphone-browser.ts).
 */
export function createMicrophone(config: MicrophoneConfig, ctx: DeviceContext = {}): Microphone {
  const parsed = MicrophoneConfigSchema.parse(config);
  if (parsed.binding === 'websim') return createWebSimMicrophone(parsed, ctx.browser);
  const device =
    parsed.binding === 'recorder'
      ? createRecorderMicrophone(parsed, ctx.logger)
      : parsed.binding === 'rtsp'
        ? createRtspMicrophone(parsed, ctx.logger)
        : createReplayMicrophone(parsed);
  return withBrowserMicrophone(device, ctx.browser, ctx.logger);
}
