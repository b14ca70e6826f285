// The microphone a config names: recorder, replay, an RTSP stream or the WebSim page (the interface is in microphone-interface.ts).
import type { Logger } from 'pino';
import type { Microphone } from './microphone-interface.js';
import { createRecorderMicrophone } from './microphone-recorder.js';
import { createReplayMicrophone } from './microphone-replay.js';
import { createRtspMicrophone } from './microphone-rtsp.js';
import { createWebSimMicrophone, withBrowserMicrophone } from './microphone-browser.js';
import type { BrowserAudio } from '../src/cortex/browser-audio.js';
import { MicrophoneConfigSchema, type MicrophoneConfig } from '../src/plugins/schemas/devices.js';

export { recorderExit, recorderFailure } from './microphone-recorder.js';
export type { Microphone } from './microphone-interface.js';
export {
  MicrophoneConfigSchema,
  RecorderMicrophoneSchema,
  ReplayMicrophoneSchema,
  type MicrophoneConfig,
  type RecorderMicrophoneConfig,
  type ReplayMicrophoneConfig,
  type WebSimMicrophoneConfig,
} from '../src/plugins/schemas/devices.js';

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
