// The config blocks of the device bindings (camera, microphone, serial line, speaker) as zod schemas: data only, no device code.
import { z } from 'zod';
import { ASR_RATES } from '../../cloud/catalog.js';

// Camera (devices/camera.ts, devices/camera-sim.ts).

const Size = {
  width: z.number().int().positive().default(640),
  height: z.number().int().positive().default(480),
};

export const OpenCvCameraSchema = z.strictObject({
  binding: z.literal('opencv'),
  /** V4L2 index (`0` is /dev/video0) or a device path / URL OpenCV can open. */
  device: z.union([z.number().int().nonnegative(), z.string().min(1)]).default(0),
  ...Size,
  fps: z.number().positive().default(30),
  /** Four-character code asked of the driver; MJPG keeps USB bandwidth low at 640x480x30. */
  fourcc: z.string().length(4).default('MJPG'),
  restart_initial_ms: z.number().int().positive().default(1000),
  restart_max_ms: z.number().int().positive().default(15_000),
});

export const FileCameraSchema = z.strictObject({
  binding: z.literal('file'),
  /** A video file OpenCV can read (mp4, avi, mkv...). */
  file: z.string().min(1),
  /** Playback rate; default the file's own. */
  fps: z.number().positive().optional(),
  loop: z.boolean().default(true),
});

export const SyntheticCameraSchema = z.strictObject({
  binding: z.literal('synthetic'),
  ...Size,
  fps: z.number().positive().default(30),
  /** Frames to produce before completing; unset: endless. */
  frames: z.number().int().positive().optional(),
});

export const CameraConfigSchema = z.discriminatedUnion('binding', [OpenCvCameraSchema, FileCameraSchema, SyntheticCameraSchema]);
export type CameraConfig = z.input<typeof CameraConfigSchema>;
export type OpenCvCameraConfig = z.output<typeof OpenCvCameraSchema>;
export type FileCameraConfig = z.output<typeof FileCameraSchema>;
export type SyntheticCameraConfig = z.output<typeof SyntheticCameraSchema>;

// Microphone (devices/microphone.ts, devices/microphone-replay.ts).

const RestartSchema = {
  /** First restart delay after the recorder fails (ms). */
  restart_initial_ms: z.number().int().positive().default(500),
  /** Longest restart delay (ms). */
  restart_max_ms: z.number().int().positive().default(10_000),
  /** Restarts in a row without audio before the microphone gives up; unset: never. */
  max_restarts: z.number().int().nonnegative().optional(),
};

export const RecorderMicrophoneSchema = z.strictObject({
  binding: z.literal('recorder'),
  /** Program spawned by bare name through PATH. */
  recorder: z.enum(['arecord', 'sox', 'rec']).default('arecord'),
  /** ALSA device name (arecord -D), e.g. `plughw:1,0`; default device when unset. */
  device: z.string().min(1).optional(),
  rate: z.literal(ASR_RATES).default(16000),
  ...RestartSchema,
});

export const ReplayMicrophoneSchema = z.strictObject({
  binding: z.literal('replay'),
  /** A WAV file (16-bit PCM, mono) or raw s16le mono PCM. */
  file: z.string().min(1),
  /** Rate of the audio; a WAV file whose header says otherwise is refused (typed error), never resampled. */
  rate: z.literal(ASR_RATES).default(16000),
  /** Start over at the end (default) or complete after one pass. */
  loop: z.boolean().default(true),
  /** Pace the audio in real time (default) or emit it as fast as it is read. */
  realtime: z.boolean().default(true),
  /** Size of each emitted buffer in ms of audio. */
  period_ms: z.number().int().positive().default(20),
});

/**
 * The WebSim page's microphone (the browser's, streamed over the page's socket at 16 kHz by a page
 * that has the WebSim token). Any recorder or replay microphone of a voice input also hears the page
 * while it streams; this binding hears nothing else.
 */
export const WebSimMicrophoneSchema = z.strictObject({
  binding: z.literal('websim'),
  rate: z.literal(16000).default(16000),
});

/**
 * The audio of an RTSP stream (a robot's camera or microphone server), decoded by ffmpeg. `listen`:
 * this runtime is the RTSP server the source publishes to (ffmpeg's `-rtsp_flags listen`); otherwise
 * the stream is pulled from `url` over TCP.
 */
export const RtspMicrophoneSchema = z.strictObject({
  binding: z.literal('rtsp'),
  url: z.string().refine((u) => URL.canParse(u) && /^rtsps?:$/.test(new URL(u).protocol), 'an rtsp:// URL'),
  listen: z.boolean().default(false),
  /** The decoder, by name on PATH. */
  ffmpeg: z.string().min(1).default('ffmpeg'),
  rate: z.literal(ASR_RATES).default(16000),
  ...RestartSchema,
});

export const MicrophoneConfigSchema = z.discriminatedUnion('binding', [
  RecorderMicrophoneSchema,
  ReplayMicrophoneSchema,
  WebSimMicrophoneSchema,
  RtspMicrophoneSchema,
]);
export type MicrophoneConfig = z.input<typeof MicrophoneConfigSchema>;
export type RecorderMicrophoneConfig = z.output<typeof RecorderMicrophoneSchema>;
export type ReplayMicrophoneConfig = z.output<typeof ReplayMicrophoneSchema>;
export type RtspMicrophoneConfig = z.output<typeof RtspMicrophoneSchema>;
export type WebSimMicrophoneConfig = z.output<typeof WebSimMicrophoneSchema>;

// Serial line (devices/serial.ts).

const SerialCommon = {
  /** Device path, e.g. `/dev/ttyUSB0` or a pty made by socat; `SerialPort.list()` needs udevadm, so paths are explicit. */
  path: z.string().min(1),
  baud_rate: z.number().int().positive().default(9600),
  /** Line delimiter; a trailing `\r` is always stripped, so `\n` also reads CRLF lines (NMEA). */
  delimiter: z.string().min(1).default('\n'),
  reopen_initial_ms: z.number().int().positive().default(500),
  reopen_max_ms: z.number().int().positive().default(5000),
};

export const SerialConfigSchema = z.discriminatedUnion('binding', [
  z.strictObject({ binding: z.literal('serialport'), ...SerialCommon }),
  /** serialport's mock binding: the port must have been made with `SerialPortMock.binding.createPort(path)`. */
  z.strictObject({ binding: z.literal('mock'), ...SerialCommon }),
]);
export type SerialConfig = z.input<typeof SerialConfigSchema>;
export type ParsedSerialConfig = z.output<typeof SerialConfigSchema>;

// Speaker (devices/speaker.ts).

export const PLAYERS = ['aplay', 'paplay', 'ffplay'] as const;
export type PlayerName = (typeof PLAYERS)[number];

export const SpeakerConfigSchema = z.discriminatedUnion('binding', [
  z.strictObject({
    binding: z.literal('player'),
    /** Program to use; default the first of aplay, paplay, ffplay found on PATH (ffplay for MP3). */
    player: z.enum(PLAYERS).optional(),
    /** ALSA device for aplay (`-D`). */
    device: z.string().min(1).optional(),
  }),
  /** Writes every clip to `dir`; with `realtime` a clip "plays" for its duration. */
  z.strictObject({
    binding: z.literal('file'),
    dir: z.string().min(1),
    realtime: z.boolean().default(true),
    /** Most clip files kept in `dir`; the oldest are deleted first, so a robot running for days never fills its disk. */
    keep: z.number().int().positive().default(100),
  }),
  /** Discards audio; with `realtime` a clip "plays" for its duration (so echo suppression behaves as on a robot). */
  z.strictObject({ binding: z.literal('null'), realtime: z.boolean().default(true) }),
]);
export type SpeakerConfig = z.input<typeof SpeakerConfigSchema>;
