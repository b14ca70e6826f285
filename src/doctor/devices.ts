// Doctor's hardware checks: microphone recorder and capture device, camera frame, serial ports, speaker player and device.
import { existsSync, readdirSync } from 'node:fs';
import { describeError } from '../errors.js';
import type { DeviceNeeds } from '../config/device-needs.js';
import { fail, ok, onPath, runProgram, warn, type CheckResult } from './system.js';

export interface DeviceCheckOptions {
  env?: NodeJS.ProcessEnv;
  /** Where device nodes live; tests point it elsewhere. */
  devDir?: string;
  /** Opens a camera and reads one frame; resolves the frame size or rejects. Default: OpenCV. */
  grabFrame?: (device: number | string) => Promise<{ width: number; height: number }>;
  /** Opens and closes a serial port; rejects when it cannot. Default: serialport. */
  openSerial?: (path: string) => Promise<void>;
}

/** A missing device is a fail when the configuration uses it and a warn otherwise (nothing will try to open it). */
function missing(name: string, needs: DeviceNeeds, used: string | undefined, detail: string, fixText: string): CheckResult {
  if (used) return fail(name, `${detail}; needed by ${used}`, fixText);
  return warn(name, `${detail} (${needs.configured ? 'the configuration does not use it' : 'no configuration loaded'})`, fixText);
}

const AUDIO_FIX = 'plug in a sound card or USB audio device, check `arecord -l` / `aplay -l`, and keep the service user in the audio group';

export async function checkMicrophone(needs: DeviceNeeds, options: DeviceCheckOptions = {}): Promise<CheckResult> {
  const name = 'microphone';
  const env = options.env ?? process.env;
  const used = needs.microphone?.reason;
  const wanted = needs.microphone?.recorder ? [needs.microphone.recorder] : ['arecord', 'sox', 'rec'];
  const recorder = wanted.find((p) => onPath(p, env));
  if (!recorder) {
    return missing(name, needs, used, `no recorder on PATH (${wanted.join(', ')})`, 'sudo apt-get install alsa-utils sox');
  }
  const arecord = onPath('arecord', env);
  if (!arecord) return warn(name, `${recorder} found; arecord is missing, so capture devices cannot be listed`, 'sudo apt-get install alsa-utils');
  const list = await runProgram(arecord, ['-l'], 5000, env);
  if (!/^card \d+:/m.test(list.stdout)) {
    const why = (list.stderr.trim().split('\n').pop() ?? '').replace(/^arecord: [\w:]+ /, '') || 'no capture devices';
    return missing(name, needs, used, `${recorder} found, but no capture device: ${why}`, AUDIO_FIX);
  }
  // A short capture proves the device opens for this user (group, busy device, wrong name).
  const device = needs.microphone?.device;
  const args = ['-q', '-d', '1', '-f', 'S16_LE', '-r', '16000', '-c', '1', '-t', 'raw', ...(device ? ['-D', device] : []), '/dev/null'];
  const r = await runProgram(arecord, args, 5000, env);
  if (r.code !== 0) {
    return missing(
      name,
      needs,
      used,
      `capture from ${device ?? 'the default device'} failed: ${r.timedOut ? 'timed out' : r.stderr.trim().split('\n').pop()}`,
      AUDIO_FIX,
    );
  }
  return ok(name, `${recorder} records from ${device ?? 'the default device'}`);
}

export async function checkSpeaker(needs: DeviceNeeds, options: DeviceCheckOptions = {}): Promise<CheckResult> {
  const name = 'speaker';
  const env = options.env ?? process.env;
  const used = needs.speaker?.reason;
  const wanted = needs.speaker?.player ? [needs.speaker.player] : ['aplay', 'paplay', 'ffplay'];
  const player = wanted.find((p) => onPath(p, env));
  if (!player) return missing(name, needs, used, `no player on PATH (${wanted.join(', ')})`, 'sudo apt-get install alsa-utils (or pulseaudio-utils, ffmpeg)');
  const aplay = onPath('aplay', env);
  if (!aplay) return ok(name, `${player} found (playback devices not listed without aplay)`);
  const list = await runProgram(aplay, ['-l'], 5000, env);
  if (!/^card \d+:/m.test(list.stdout)) {
    return missing(name, needs, used, `${player} found, but no playback device`, AUDIO_FIX);
  }
  return ok(name, `${player} found, playback device present`);
}

/** Video devices present, e.g. ['/dev/video0']. */
export function videoDevices(devDir = '/dev'): string[] {
  try {
    return readdirSync(devDir)
      .filter((f) => /^video\d+$/.test(f))
      .sort()
      .map((f) => `${devDir}/${f}`);
  } catch {
    return [];
  }
}

async function grabWithOpenCv(device: number | string): Promise<{ width: number; height: number }> {
  const { loadOpenCV, cvCall } = await import('../vision/opencv.js');
  const cv = await loadOpenCV();
  const cap = cvCall(`open camera ${String(device)}`, () => new cv.VideoCapture(device as never));
  try {
    const frame = cvCall('read a frame', () => cap.read());
    if (frame.empty) throw new Error('the camera opened but delivered an empty frame');
    return { width: frame.cols, height: frame.rows };
  } finally {
    cap.release();
  }
}

export async function checkCamera(needs: DeviceNeeds, options: DeviceCheckOptions = {}): Promise<CheckResult> {
  const name = 'camera';
  const used = needs.camera?.reason;
  const device = needs.camera?.device ?? 0;
  const devDir = options.devDir ?? '/dev';
  const fixText = 'plug in a V4L2 camera (USB or CSI with a V4L2 driver), check `ls /dev/video*`, and keep the service user in the video group';
  const path = typeof device === 'number' ? `${devDir}/video${device}` : device;
  if (path.startsWith('/dev/') || path.startsWith(devDir)) {
    if (!existsSync(path)) {
      const found = videoDevices(devDir);
      return missing(name, needs, used, `${path} does not exist (${found.length ? `found ${found.join(', ')}` : 'no video devices'})`, fixText);
    }
  }
  try {
    const size = await (options.grabFrame ?? grabWithOpenCv)(device);
    return ok(name, `${path} delivered a ${size.width}x${size.height} frame`);
  } catch (err) {
    return missing(name, needs, used, `${path} did not deliver a frame: ${describeError(err)}`, fixText);
  }
}

async function openWithSerialport(path: string): Promise<void> {
  const { SerialPort } = await import('serialport');
  await new Promise<void>((resolve, reject) => {
    const port = new SerialPort({ path, baudRate: 9600, autoOpen: false });
    port.open((err) => {
      if (err) return reject(err);
      port.close(() => resolve());
    });
  });
}

/** One result per serial port the configuration names; ok when it names none. */
export async function checkSerial(needs: DeviceNeeds, options: DeviceCheckOptions = {}): Promise<CheckResult[]> {
  if (needs.serial.length === 0) {
    return [ok('serial', needs.configured ? 'the configuration names no serial ports' : 'no configuration loaded: no serial ports to check')];
  }
  const open = options.openSerial ?? openWithSerialport;
  const fixText = 'check the cable and `ls -l /dev/serial/by-id/`, use a stable /dev/serial/by-id path, and keep the service user in the dialout group';
  return Promise.all(
    needs.serial.map(async (path): Promise<CheckResult> => {
      const name = `serial ${path}`;
      if (!existsSync(path)) return fail(name, `${path} does not exist`, fixText);
      try {
        await open(path);
        return ok(name, `${path} opens`);
      } catch (err) {
        return fail(name, `${path} exists but does not open: ${describeError(err)}`, fixText);
      }
    }),
  );
}
