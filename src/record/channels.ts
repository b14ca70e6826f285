// The channels of a recording and of the live Foxglove socket: topics, schemas (JSON Schema; ros2msg for DDS), and how samples become messages.
import type { AgentEvent } from '../cortex/events.js';
import { redact, redactedView } from '../redact.js';

/**
 * One channel: a topic, its message encoding and its schema. JSON messages with a JSON Schema (so
 * Foxglove shows fields as tables and plots), or, with `ros2msg`, CDR bytes with their ROS 2 message
 * definition (what a ROS 2 bag holds: Foxglove decodes and shows them natively).
 */
export interface ChannelSpec {
  topic: string;
  schemaName: string;
  schema: Record<string, unknown>;
  /** A DDS topic: the ros2msg definition text; messages are CDR bytes (encapsulation header first). */
  ros2msg?: string;
}

/** Bus events are on `/events/<type>` (dots kept: `/events/mode.changed`). */
export const EVENT_PREFIX = '/events/';
/** Camera frames of an input, as `foxglove.CompressedImage` (the JPEG the pipeline sent). */
export const CAMERA_PREFIX = '/camera/';
/** The robot's lidar, each revolution as `foxglove.LaserScan`. */
export const LIDAR_TOPIC = '/lidar';
/** Microphone audio of an input, raw 16-bit PCM with its rate. */
export const MICROPHONE_PREFIX = '/microphone/';
/** A message that closes the current chunk (see recorder.ts); readers skip it. */
export const SYNC_TOPIC = '/cortexd/sync';
/** The configuration that ran, as an attachment (secrets redacted). */
export const CONFIG_ATTACHMENT = 'config.json';

const timeSchema = {
  type: 'object',
  properties: { sec: { type: 'integer', minimum: 0 }, nsec: { type: 'integer', minimum: 0 } },
};

/** The schema of every bus event: `type` and `at` always, the rest per type (kept open so new fields are recorded). */
export function eventChannel(type: string): ChannelSpec {
  return {
    topic: `${EVENT_PREFIX}${type}`,
    schemaName: `cortexd.event.${type}`,
    schema: {
      title: `cortexd.event.${type}`,
      type: 'object',
      properties: { type: { type: 'string' }, at: { type: 'number', description: 'ms since the epoch' } },
      required: ['type', 'at'],
      additionalProperties: true,
    },
  };
}

export function cameraChannel(input: string): ChannelSpec {
  return {
    topic: `${CAMERA_PREFIX}${input}`,
    schemaName: 'foxglove.CompressedImage',
    schema: {
      title: 'foxglove.CompressedImage',
      type: 'object',
      properties: {
        timestamp: timeSchema,
        frame_id: { type: 'string' },
        data: { type: 'string', contentEncoding: 'base64' },
        format: { type: 'string' },
      },
    },
  };
}

const vector3 = (title: string) => ({ title, type: 'object', properties: { x: { type: 'number' }, y: { type: 'number' }, z: { type: 'number' } } });

/** Foxglove's `foxglove.LaserScan` (docs.foxglove.dev, message schemas: LaserScan), JSON encoding. */
export function lidarChannel(): ChannelSpec {
  return {
    topic: LIDAR_TOPIC,
    schemaName: 'foxglove.LaserScan',
    schema: {
      title: 'foxglove.LaserScan',
      description: 'A single scan from a planar laser range-finder',
      type: 'object',
      properties: {
        timestamp: timeSchema,
        frame_id: { type: 'string' },
        pose: {
          title: 'foxglove.Pose',
          type: 'object',
          properties: {
            position: vector3('foxglove.Vector3'),
            orientation: {
              title: 'foxglove.Quaternion',
              type: 'object',
              properties: { x: { type: 'number' }, y: { type: 'number' }, z: { type: 'number' }, w: { type: 'number' } },
            },
          },
        },
        start_angle: { type: 'number', description: 'Bearing of first point, in radians' },
        end_angle: { type: 'number', description: 'Bearing of last point, in radians' },
        ranges: { type: 'array', items: { type: 'number' }, description: 'equally spaced from start_angle to end_angle; 0: no return' },
        intensities: { type: 'array', items: { type: 'number' } },
      },
    },
  };
}

/**
 * Microphone audio as Foxglove's `foxglove.RawAudio` (interleaved little-endian 16-bit PCM, format
 * `pcm-s16`), so Foxglove plays it. Recordings made before this schema hold `cortexd.RawAudio`
 * (format `pcm_s16le`, the same fields): the reader takes either, as it takes any schema.
 */
export function microphoneChannel(input: string): ChannelSpec {
  return {
    topic: `${MICROPHONE_PREFIX}${input}`,
    schemaName: 'foxglove.RawAudio',
    schema: {
      title: 'foxglove.RawAudio',
      description: 'A single block of an audio bitstream',
      type: 'object',
      properties: {
        timestamp: { ...timeSchema, description: 'Timestamp of the start of the audio block' },
        data: { type: 'string', contentEncoding: 'base64', description: 'Audio data. The samples in the data must be interleaved and little-endian' },
        format: { type: 'string', description: "Audio format. Only 'pcm-s16' is currently supported" },
        sample_rate: { type: 'integer', minimum: 0, description: 'Sample rate in Hz' },
        number_of_channels: { type: 'integer', minimum: 0, description: 'Number of channels in the audio block' },
      },
    },
  };
}

/** Prefixes of the recording's own channels: a ROS topic named like one is recorded under `/ros2` (`/ros2/events/x`). */
const OWN_PREFIXES = [EVENT_PREFIX, CAMERA_PREFIX, MICROPHONE_PREFIX, '/cortexd/'];

/** The channel topic of a DDS topic: its ROS name (`rt/odom` -> `/odom`; another DDS name gets a leading `/`). */
export function ddsChannelTopic(ddsTopic: string): string {
  const name = ddsTopic.startsWith('rt/') ? `/${ddsTopic.slice(3)}` : ddsTopic.startsWith('/') ? ddsTopic : `/${ddsTopic}`;
  return OWN_PREFIXES.some((p) => name.startsWith(p)) ? `/ros2${name}` : name;
}

/** A DDS topic's channel: schema `pkg/msg/Name` in ros2msg, messages in CDR (as a ROS 2 bag in MCAP has them). */
export function ddsChannel(ddsTopic: string, rosType: string, definition: string): ChannelSpec {
  return { topic: ddsChannelTopic(ddsTopic), schemaName: rosType, schema: {}, ros2msg: definition };
}

/** The run's log lines (warnings and errors of the process log, and the bus's `error` events) as Foxglove's `foxglove.Log`. */
export const LOG_TOPIC = '/log';

export const LOG_LEVEL = { unknown: 0, debug: 1, info: 2, warning: 3, error: 4, fatal: 5 } as const;

export function logChannel(): ChannelSpec {
  return {
    topic: LOG_TOPIC,
    schemaName: 'foxglove.Log',
    schema: {
      title: 'foxglove.Log',
      description: 'A log message',
      type: 'object',
      properties: {
        timestamp: { ...timeSchema, description: 'Timestamp of the log message' },
        level: {
          title: 'foxglove.LogLevel',
          description: 'Log level',
          oneOf: Object.entries(LOG_LEVEL).map(([title, value]) => ({ title: title.toUpperCase(), const: value })),
        },
        message: { type: 'string', description: 'Log message' },
        name: { type: 'string', description: 'Process or node name' },
        file: { type: 'string', description: 'Filename' },
        line: { type: 'integer', minimum: 0, description: 'Line number in the file' },
      },
    },
  };
}

/**
 * The channel of the recorder's chunk-closing padding (see recorder.ts), with a schema like every
 * channel: each message is an empty JSON object followed by spaces (JSON allows the whitespace, lz4
 * makes it ~100 bytes). Recordings made before it hold zeros on a channel without a schema; readers skip both.
 */
export function syncChannel(): ChannelSpec {
  return {
    topic: SYNC_TOPIC,
    schemaName: 'cortexd.Sync',
    schema: {
      title: 'cortexd.Sync',
      description: 'Padding that closes the open chunk every second (an empty object and whitespace); readers skip it.',
      type: 'object',
      properties: {},
    },
  };
}

export const timeOf = (atMs: number) => ({ sec: Math.floor(atMs / 1000), nsec: Math.round((atMs % 1000) * 1e6) });

/** A bus event as recorded: secrets redacted like the logs (prompts and answers may quote a key). */
export function eventMessage(event: AgentEvent): Record<string, unknown> {
  return redactedView(event) as Record<string, unknown>;
}

export function frameMessage(input: string, jpeg: Buffer, atMs: number): Record<string, unknown> {
  return { timestamp: timeOf(atMs), frame_id: input, data: jpeg.toString('base64'), format: 'jpeg' };
}

export function audioMessage(pcm: Buffer, rate: number, atMs: number): Record<string, unknown> {
  return { timestamp: timeOf(atMs), data: pcm.toString('base64'), format: 'pcm-s16', sample_rate: rate, number_of_channels: 1 };
}

/** The padding message of the sync channel: `{}` and spaces, `bytes` long. */
export function syncMessage(bytes: number): Uint8Array {
  const pad = new Uint8Array(bytes).fill(0x20);
  pad[0] = 0x7b; // {
  pad[1] = 0x7d; // }
  return pad;
}

/** One log line as `foxglove.Log`: `name` is who said it (the mode, input or action of the line, else `cortexd`). */
export function logMessage(level: number, message: string, name: string, atMs: number): Record<string, unknown> {
  return { timestamp: timeOf(atMs), level, message: redact(message), name, file: '', line: 0 };
}
