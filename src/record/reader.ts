// Reads a recording back in time order, one cut short by a kill -9 too (every whole chunk before the cut), within bounds, and summarises it.
import { open } from 'node:fs/promises';
import { McapStreamReader } from '@mcap/core';
import { CortexError } from '../errors.js';
import { decompressHandlers } from './compression.js';
import { CAMERA_PREFIX, CONFIG_ATTACHMENT, EVENT_PREFIX, MICROPHONE_PREFIX, SYNC_TOPIC } from './channels.js';

export interface RecordedMessage {
  topic: string;
  schemaName: string;
  /** ms since the epoch. */
  atMs: number;
  /** The decoded JSON message; `{}` for a DDS sample (its bytes are in `cdr`). */
  value: Record<string, unknown>;
  /** A DDS sample's CDR bytes (a channel of message encoding `cdr`). */
  cdr?: Uint8Array;
  bytes: number;
}

export interface Recording {
  file: string;
  library: string;
  messages: RecordedMessage[];
  /** The configuration that ran (JSON text), when the recording holds it. */
  config: string | undefined;
  /** The file ends before its footer (the process was killed): what is here is every whole chunk written. */
  truncated: boolean;
}

/**
 * What reading one recording may cost. A recording is data from anywhere (a file someone sent): a
 * few megabytes of LZ4 can claim gigabytes once decompressed, so every claim is checked before it is
 * believed. Generous for a real run: a day of events, or an hour of camera at the default rate.
 */
export interface ReadLimits {
  /** Size of the file itself. */
  fileBytes: number;
  /** Decompressed size one chunk may claim (checked before anything is allocated for it). */
  chunkBytes: number;
  /** How many times its stored size a chunk may decompress to: LZ4 makes 5 to 20 of a real run's JSON, 255 of a bomb's zeros. */
  chunkRatio: number;
  /** Decompressed bytes of all chunks together. */
  totalBytes: number;
  /** Messages kept (events, frames, audio). */
  messages: number;
  /** Wall-clock time the reading may take, in ms. */
  timeMs: number;
}

export const DEFAULT_READ_LIMITS: ReadLimits = {
  fileBytes: 1024 * 1024 * 1024,
  chunkBytes: 64 * 1024 * 1024,
  chunkRatio: 64,
  totalBytes: 1024 * 1024 * 1024,
  messages: 2_000_000,
  timeMs: 120_000,
};

/** A recording past one of the read limits: the message names the limit, its value and the file. */
export class RecordingLimitError extends CortexError {
  constructor(
    file: string,
    readonly limit: keyof ReadLimits,
    what: string,
  ) {
    super('recording_limit', `${file}: ${what}; cortexd replay stops here rather than use unbounded memory or time`);
  }
}

const mib = (n: number) => `${Math.round(n / 1024 / 1024)} MiB`;

/** Decompressed size below which a chunk's growth is not judged (the per-chunk and total limits still hold). */
const RATIO_FROM_BYTES = 1024 * 1024;

/** The whole file, refused past `fileBytes` before it is read. */
async function readBounded(file: string, fileBytes: number): Promise<Buffer> {
  const handle = await open(file, 'r');
  try {
    const size = (await handle.stat()).size;
    if (size > fileBytes) throw new RecordingLimitError(file, 'fileBytes', `the file is ${mib(size)}, over the limit of ${mib(fileBytes)}`);
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** The lz4 decompression of chunks within the limits: per chunk, its growth, in all, and the reading's time since `started`. */
function boundedLz4(file: string, limits: ReadLimits, started: number) {
  let decompressed = 0;
  return {
    lz4: (buffer: Uint8Array, size: bigint): Uint8Array => {
      const n = Number(size);
      if (n > limits.chunkBytes)
        throw new RecordingLimitError(file, 'chunkBytes', `a chunk claims ${mib(n)} decompressed, over the limit of ${mib(limits.chunkBytes)} per chunk`);
      // The ratio is judged on chunks that would take real memory: the recorder's own small chunks of
      // repeated JSON events compress 80x and more, which is no bomb.
      if (n > RATIO_FROM_BYTES && n > buffer.byteLength * limits.chunkRatio)
        throw new RecordingLimitError(
          file,
          'chunkRatio',
          `a chunk of ${buffer.byteLength} bytes claims ${n} decompressed, over the limit of ${limits.chunkRatio} times its stored size`,
        );
      decompressed += n;
      if (decompressed > limits.totalBytes)
        throw new RecordingLimitError(file, 'totalBytes', `its chunks decompress to more than the limit of ${mib(limits.totalBytes)} in all`);
      if (Date.now() - started > limits.timeMs)
        throw new RecordingLimitError(file, 'timeMs', `reading it took longer than the limit of ${limits.timeMs / 1000} s`);
      return decompressHandlers.lz4(buffer, size);
    },
  };
}

/**
 * Reads a whole recording; a damaged tail ends the reading where the damage starts (`truncated`). A
 * file past `limits` is refused with a RecordingLimitError naming the limit.
 */
export async function readRecording(file: string, limits: ReadLimits = DEFAULT_READ_LIMITS): Promise<Recording> {
  const started = Date.now();
  const data = await readBounded(file, limits.fileBytes);
  const reader = new McapStreamReader({ decompressHandlers: boundedLz4(file, limits, started) });
  const channels = new Map<number, { topic: string; schemaId: number; cdr: boolean }>();
  const schemas = new Map<number, string>();
  const messages: RecordedMessage[] = [];
  let library = '';
  let config: string | undefined;
  let truncated = false;
  const decoder = new TextDecoder();
  try {
    reader.append(data);
    for (let record = reader.nextRecord(); record; record = reader.nextRecord()) {
      switch (record.type) {
        case 'Header':
          library = record.library;
          break;
        case 'Schema':
          schemas.set(record.id, record.name);
          break;
        case 'Channel':
          channels.set(record.id, { topic: record.topic, schemaId: record.schemaId, cdr: record.messageEncoding === 'cdr' });
          break;
        case 'Attachment':
          if (record.name === CONFIG_ATTACHMENT) config = decoder.decode(record.data);
          break;
        case 'Message': {
          const channel = channels.get(record.channelId);
          if (!channel || channel.topic === SYNC_TOPIC) break;
          let value: Record<string, unknown> = {};
          if (!channel.cdr) {
            try {
              value = JSON.parse(decoder.decode(record.data)) as Record<string, unknown>;
            } catch {
              break;
            }
          }
          if (messages.length >= limits.messages)
            throw new RecordingLimitError(file, 'messages', `it holds more than the limit of ${limits.messages} messages`);
          if ((messages.length & 1023) === 0 && Date.now() - started > limits.timeMs)
            throw new RecordingLimitError(file, 'timeMs', `reading it took longer than the limit of ${limits.timeMs / 1000} s`);
          messages.push({
            topic: channel.topic,
            schemaName: schemas.get(channel.schemaId) ?? '',
            atMs: Number(record.logTime / 1_000_000n),
            value,
            ...(channel.cdr ? { cdr: record.data } : {}),
            bytes: record.data.byteLength,
          });
          break;
        }
        default:
          break;
      }
    }
    truncated = !reader.done();
  } catch (err) {
    if (err instanceof RecordingLimitError) throw err;
    truncated = true;
  }
  messages.sort((a, b) => a.atMs - b.atMs);
  return { file, library, messages, config, truncated };
}

export interface RecordingSummary {
  file: string;
  duration_ms: number;
  start: string | undefined;
  truncated: boolean;
  channels: Array<{ topic: string; schema: string; messages: number; bytes: number }>;
  modes: string[];
  model_calls: number;
  actions: number;
  has_config: boolean;
}

export function summarise(rec: Recording): RecordingSummary {
  const byTopic = new Map<string, { topic: string; schema: string; messages: number; bytes: number }>();
  const modes: string[] = [];
  let modelCalls = 0;
  let actions = 0;
  for (const m of rec.messages) {
    const c = byTopic.get(m.topic) ?? { topic: m.topic, schema: m.schemaName, messages: 0, bytes: 0 };
    c.messages++;
    c.bytes += m.bytes;
    byTopic.set(m.topic, c);
    if (m.topic === `${EVENT_PREFIX}agent.started`) modes.push(String(m.value.mode));
    if (m.topic === `${EVENT_PREFIX}mode.changed`) modes.push(String(m.value.to));
    if (m.topic === `${EVENT_PREFIX}model.answer`) modelCalls++;
    if (m.topic === `${EVENT_PREFIX}action` && m.value.state === 'running') actions++;
  }
  const first = rec.messages[0]?.atMs;
  const last = rec.messages.at(-1)?.atMs;
  const order = (t: string) => (t.startsWith(EVENT_PREFIX) ? 0 : t.startsWith(CAMERA_PREFIX) ? 1 : t.startsWith(MICROPHONE_PREFIX) ? 2 : 3);
  return {
    file: rec.file,
    duration_ms: first !== undefined && last !== undefined ? last - first : 0,
    start: first !== undefined ? new Date(first).toISOString() : undefined,
    truncated: rec.truncated,
    channels: [...byTopic.values()].sort((a, b) => order(a.topic) - order(b.topic) || a.topic.localeCompare(b.topic)),
    modes,
    model_calls: modelCalls,
    actions,
    has_config: rec.config !== undefined,
  };
}
