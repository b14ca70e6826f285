// The browser's microphone as a device: the `websim` binding (the page only), and the page's audio in place of a robot microphone while a page streams.
import { switchMap } from 'rxjs';
import type { Logger } from 'pino';
import type { BrowserAudio } from '../src/cortex/browser-audio.js';
import { DeviceError } from './device-error.js';
import type { Microphone } from './microphone-interface.js';
import type { WebSimMicrophoneConfig } from '../src/plugins/schemas/devices.js';

/**
 * The `websim` binding: the audio of the WebSim page that holds the microphone, and nothing while no
 * page does (the voice gate then sees no speech). It never fails: a page that stops is silence.
 */
export function createWebSimMicrophone(config: WebSimMicrophoneConfig, browser: BrowserAudio | undefined): Microphone {
  if (!browser) {
    throw new DeviceError('microphone', 'the websim binding needs the agent (it hears the WebSim page of a running agent)', { code: 'microphone_no_browser' });
  }
  return {
    binding: 'websim',
    rate: config.rate,
    hearsPage: true,
    pcm: () => browser.hearing(browser.microphone()),
  };
}

/**
 * A robot microphone that gives way to the browser: while a page holds the microphone its audio
 * replaces the device's, and when the page stops the device is heard again. A replay is stopped
 * meanwhile; a recorder keeps running under its session actor (a recorder with no sound card has
 * failed for good at its first run and leaves the page to hear). Voice detection, muting while the robot speaks and
 * barge-in apply to both alike, downstream. Only at the browser's rate (16 kHz): a microphone at
 * another rate keeps its device and says once why the page is not heard.
 */
export function withBrowserMicrophone(device: Microphone, browser: BrowserAudio | undefined, logger?: Logger): Microphone {
  if (!browser || device.binding === 'websim') return device;
  if (device.rate !== browser.rate) {
    logger?.info(`microphone at ${device.rate} Hz: the WebSim page's microphone (${browser.rate} Hz) is not heard by this input`);
    return device;
  }
  return {
    binding: device.binding,
    rate: device.rate,
    hearsPage: true,
    ...(device.device ? { device: device.device } : {}),
    pcm: () => browser.hearing(browser.active$.pipe(switchMap((pageHolds) => (pageHolds ? browser.microphone() : device.pcm())))),
  };
}
