// Reads a recording back in time order, including one cut short by a kill -9 (every whole chunk before the cut), and summarises it.
import { readFile } from 'node:fs/promises';
import { McapStreamReader } from '@mcap/core';
import { decompressHandlers } from './compression.js';
import { CAMERA_PREFIX, CONFIG_ATTACHMENT, EVENT_PREFIX, MICROPHONE_PREFIX, SYNC_TOPIC } from './channels.js';

export interface RecordedMessage {
  topic: string;
  schemaName: string;
  /** ms since the epoch. */
  atMs: number;
  /** The decoded JSON message. */
  value: Record<string, unknown>;
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

/** Reads a whole recording; a damaged tail ends the reading where the damage starts (`truncated`). */
export async function readRecording(file: string): Promise<Recording> {
  const data = await readFile(file);
  const reader = new McapStreamReader({ decompressHandlers });
  const channels = new Map<number, { topic: string; schemaId: number }>();
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
          channels.set(record.id, { topic: record.topic, schemaId: record.schemaId });
          break;
        case 'Attachment':
          if (record.name === CONFIG_ATTACHMENT) config = decoder.decode(record.data);
          break;
        case 'Message': {
          const channel = channels.get(record.channelId);
          if (!channel || channel.topic === SYNC_TOPIC) break;
          let value: Record<string, unknown>;
          try {
            value = JSON.parse(decoder.decode(record.data)) as Record<string, unknown>;
          } catch {
            break;
          }
          messages.push({
            topic: channel.topic,
            schemaName: schemas.get(channel.schemaId) ?? '',
            atMs: Number(record.logTime / 1_000_000n),
            value,
            bytes: record.data.byteLength,
          });
          break;
        }
        default:
          break;
      }
    }
    truncated = !reader.done();
  } catch {
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
