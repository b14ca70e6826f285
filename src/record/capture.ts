// What `--record` and `--foxglove` attach to a run: bus events, camera frames, microphone audio, lidar scans and DDS samples.
import type { Subscription } from 'rxjs';
import type { AgentBus } from '../cortex/events.js';
import type { MediaTap } from '../cortex/input.js';
import { redactDeep } from '../redact.js';
import { laserScanMessage } from '../lidar/view.js';
import {
  audioMessage,
  cameraChannel,
  CONFIG_ATTACHMENT,
  type ChannelSpec,
  ddsChannel,
  eventChannel,
  eventMessage,
  frameMessage,
  LOG_LEVEL,
  lidarChannel,
  logChannel,
  logMessage,
  microphoneChannel,
} from './channels.js';
import { FoxgloveLive } from './foxglove.js';
import { Recorder, type RecorderStats } from './recorder.js';

export interface CaptureOptions {
  bus: AgentBus;
  record?: {
    file: string;
    rotateBytes?: number;
    keep?: number;
    /** Camera frames per second kept in the file (default: every frame sent). */
    fps?: number;
  };
  /** Port of the live Foxglove server (0: a free one). */
  foxglove?: number;
  /** The token a Foxglove client must present (required with `foxglove`). */
  foxgloveToken?: string;
  /** The configuration that ran; stored redacted as the recording's attachment. */
  config?: unknown;
  onError?: (message: string) => void;
  /** What the recording lost because writing fell behind: said at the first dropped event, and counted at close. */
  onWarning?: (message: string) => void;
}

export interface Capture {
  /** Handed to the agent: inputs give it the frames they send and the audio they hear. */
  readonly media: MediaTap;
  readonly foxgloveUrl: string | undefined;
  /** One line of the process log (pino JSON): recorded on `/log` as `foxglove.Log`. */
  logLine(line: string): void;
  close(): Promise<RecorderStats | undefined>;
}

/** `message` is the value or a function that makes it (made once, by the first sink that needs it). */
type Sink = (spec: ChannelSpec, message: () => unknown, atMs: number, media: boolean) => void;

/** A live socket without a token would stream the camera and microphone to every local user: refused. */
function requiredToken(token: string | undefined): string {
  if (!token) throw new Error('the live Foxglove socket needs a token');
  return token;
}

/** The MCAP recorder, with the configuration (secrets redacted) attached. */
function openRecorder(
  record: NonNullable<CaptureOptions['record']>,
  config: unknown,
  { onError, onWarning }: Pick<CaptureOptions, 'onError' | 'onWarning'>,
): Promise<Recorder> {
  return Recorder.open({
    file: record.file,
    ...(record.rotateBytes !== undefined ? { rotateBytes: record.rotateBytes } : {}),
    ...(record.keep !== undefined ? { keep: record.keep } : {}),
    ...(config !== undefined
      ? { attachments: [{ name: CONFIG_ATTACHMENT, mediaType: 'application/json', data: Buffer.from(JSON.stringify(redactDeep(config), null, 2)) }] }
      : {}),
    ...(onError ? { onError } : {}),
    ...(onWarning ? { onDrop: onWarning } : {}),
  });
}

/**
 * What inputs hand the capture: camera frames (at most one per `minFrameGapMs` per camera), audio,
 * lidar scans and DDS samples, each on its own channel. What the robot sent over DDS is kept under a
 * backlog; what it heard may be dropped like media.
 */
function mediaTap(emit: Sink, minFrameGapMs: number): MediaTap {
  const lastFrameAt = new Map<string, number>();
  const cameraSpecs = new Map<string, ChannelSpec>();
  const micSpecs = new Map<string, ChannelSpec>();
  const lidarSpec = lidarChannel();
  const ddsSpecs = new Map<string, ChannelSpec>();
  return {
    frame(input, jpeg, atMs) {
      const last = lastFrameAt.get(input);
      if (last !== undefined && atMs - last < minFrameGapMs) return;
      lastFrameAt.set(input, atMs);
      let spec = cameraSpecs.get(input);
      if (!spec) cameraSpecs.set(input, (spec = cameraChannel(input)));
      emit(spec, () => frameMessage(input, jpeg, atMs), atMs, true);
    },
    audio(input, pcm, rate, atMs) {
      let spec = micSpecs.get(input);
      if (!spec) micSpecs.set(input, (spec = microphoneChannel(input)));
      emit(spec, () => audioMessage(pcm, rate, atMs), atMs, true);
    },
    scan(scan, sensorMountingDeg) {
      emit(lidarSpec, () => laserScanMessage(scan, sensorMountingDeg), scan.at, true);
    },
    dds(sample) {
      let spec = ddsSpecs.get(sample.topic);
      if (!spec) ddsSpecs.set(sample.topic, (spec = ddsChannel(sample.topic, sample.rosType, sample.schemaText)));
      emit(spec, () => sample.cdr, sample.atMs, sample.direction === 'in');
    },
  };
}

/** Starts recording (MCAP) and/or the live Foxglove socket; everything the bus, the inputs and the log say goes to both. */
export async function startCapture(options: CaptureOptions): Promise<Capture> {
  const recorder = options.record ? await openRecorder(options.record, options.config, options) : undefined;
  let live: FoxgloveLive | undefined;
  try {
    live =
      options.foxglove !== undefined
        ? await FoxgloveLive.start({
            port: options.foxglove,
            token: requiredToken(options.foxgloveToken),
            ...(options.onError ? { onError: options.onError } : {}),
          })
        : undefined;
  } catch (err) {
    await recorder?.close();
    throw err;
  }
  const sinks: Sink[] = [];
  if (recorder) sinks.push((spec, message, atMs, media) => recorder.write(spec, message, atMs, media));
  if (live) sinks.push((spec, message, atMs) => live.publish(spec, message, atMs));
  const emit: Sink = (spec, make, atMs, media) => {
    let made: { value: unknown } | undefined;
    const once = () => (made ??= { value: make() }).value;
    for (const sink of sinks) sink(spec, once, atMs, media);
  };

  const eventSpecs = new Map<string, ChannelSpec>();
  const sub: Subscription = options.bus.events$.subscribe((event) => {
    let spec = eventSpecs.get(event.type);
    if (!spec) eventSpecs.set(event.type, (spec = eventChannel(event.type)));
    emit(spec, () => eventMessage(event), event.at, false);
  });

  const media = mediaTap(emit, options.record?.fps ? 1000 / options.record.fps : 0);

  const logSpec = logChannel();
  return {
    media,
    foxgloveUrl: live?.url,
    logLine(line) {
      const entry = parseLogLine(line);
      if (entry) emit(logSpec, () => logMessage(entry.level, entry.message, entry.name, entry.atMs), entry.atMs, false);
    },
    async close() {
      sub.unsubscribe();
      await live?.close();
      const stats = await recorder?.close();
      if (stats && (stats.droppedEvents > 0 || stats.droppedMedia > 0))
        options.onWarning?.(
          `recording to ${options.record?.file} lost ${stats.droppedEvents} events and ${stats.droppedMedia} media messages (camera, microphone, lidar, DDS samples heard) because writing fell behind`,
        );
      return stats;
    },
  };
}

/** pino's numeric levels as foxglove.LogLevel. */
function foxgloveLevel(pinoLevel: number): number {
  if (pinoLevel >= 60) return LOG_LEVEL.fatal;
  if (pinoLevel >= 50) return LOG_LEVEL.error;
  if (pinoLevel >= 40) return LOG_LEVEL.warning;
  if (pinoLevel >= 30) return LOG_LEVEL.info;
  return LOG_LEVEL.debug;
}

/** A pino JSON line as a log message: its level, text (with the error it carries), who said it and when; undefined for what is not one. */
export function parseLogLine(line: string): { level: number; message: string; name: string; atMs: number } | undefined {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!entry || typeof entry !== 'object' || typeof entry.msg !== 'string') return undefined;
  const error = typeof entry.error === 'string' ? entry.error : (entry.err as { message?: unknown } | undefined)?.message;
  const message = typeof error === 'string' && error && !entry.msg.includes(error) ? `${entry.msg}: ${error}` : entry.msg;
  const who = ['mode', 'input', 'action', 'actor', 'simulator', 'hook'].map((k) => entry[k]).filter((v): v is string => typeof v === 'string');
  return {
    level: foxgloveLevel(typeof entry.level === 'number' ? entry.level : 30),
    message,
    name: who.length ? `cortexd/${who.join('/')}` : 'cortexd',
    atMs: typeof entry.time === 'number' ? entry.time : Date.now(),
  };
}
