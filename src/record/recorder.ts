// An MCAP recording of a run: chunked, lz4-compressed, closed every second so a kill -9 loses at most the last one, rotated by size with a retention count.
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { McapWriter } from '@mcap/core';
import { FileHandleWritable } from '@mcap/nodejs';
import { describeError } from '../errors.js';
import { type ChannelSpec, SYNC_TOPIC, syncChannel, syncMessage } from './channels.js';
import { compressChunk } from './compression.js';

export interface RecorderOptions {
  file: string;
  /** A file that passes this size is closed and a new one begins (default 256 MiB). */
  rotateBytes?: number;
  /** Closed files kept beside the current one: FILE.1.mcap (newest) .. FILE.<keep>.mcap (default 5). */
  keep?: number;
  /** How often the open chunk is closed and written, ms (default 1000). */
  flushMs?: number;
  /** Messages waiting to be written before media is dropped (counted); events are dropped (counted) only past twice this. */
  maxPending?: number;
  /** Attachments written at the start of every file (the configuration that ran). */
  attachments?: Array<{ name: string; mediaType: string; data: Buffer }>;
  onError?: (message: string) => void;
  /** Told once, at the first event dropped because writing fell behind (the recording then misses events; `droppedEvents` counts them). */
  onDrop?: (message: string) => void;
  /** ms since the epoch (tests). */
  now?: () => number;
}

export interface RecorderStats {
  messages: number;
  bytes: number;
  droppedMedia: number;
  /** Bus events and log lines not recorded because twice `maxPending` messages waited. */
  droppedEvents: number;
  files: number;
}

/** Chunks close at this size; a sync message pads the open chunk past it to close it on time (zeros cost ~100 bytes in lz4). */
const CHUNK_BYTES = 64 * 1024;
const SYNC_SPEC = syncChannel();

interface Pending {
  topic: string;
  spec: ChannelSpec | undefined;
  /** The message, or how to make it: encoding happens in the writing loop, off the producer's path (the tick). */
  message: unknown;
  atMs: number;
  media: boolean;
}

/**
 * Writes messages in arrival order through one promise chain (McapWriter requires each call to finish
 * before the next). Memory: at most `maxPending` media messages wait; above it media is dropped and
 * counted, events are kept up to twice that. A write error is reported once and recording stops; the
 * run goes on.
 */
export class Recorder {
  private handle: FileHandle | undefined;
  private writer: McapWriter | undefined;
  private readonly channels = new Map<string, number>();
  private readonly sequence = new Map<number, number>();
  private queue: Pending[] = [];
  private pendingMedia = 0;
  private draining: Promise<void> | undefined;
  private dirty = false;
  private failed = false;
  private closed = false;
  private readonly timer: NodeJS.Timeout;
  private fileBytes = 0;
  private readonly counters: RecorderStats = { messages: 0, bytes: 0, droppedMedia: 0, droppedEvents: 0, files: 0 };
  private readonly rotateBytes: number;
  private readonly keep: number;
  private readonly maxPending: number;

  private constructor(private readonly options: RecorderOptions) {
    this.rotateBytes = options.rotateBytes ?? 256 * 1024 * 1024;
    this.keep = options.keep ?? 5;
    this.maxPending = options.maxPending ?? 512;
    this.timer = setInterval(() => this.sync(), options.flushMs ?? 1000);
    this.timer.unref();
  }

  static async open(options: RecorderOptions): Promise<Recorder> {
    const r = new Recorder(options);
    await r.openFile();
    return r;
  }

  get stats(): RecorderStats {
    return { ...this.counters };
  }

  /**
   * Queues one message on `spec`'s topic (the channel is registered on first use). `message` may be a
   * function that makes it: it runs in the writing loop, so the producer (the tick) only pays a push.
   */
  write(spec: ChannelSpec, message: unknown, atMs: number, media = false): void {
    if (this.closed || this.failed) return;
    if ((media && this.pendingMedia >= this.maxPending) || this.queue.length >= 2 * this.maxPending) {
      if (media) this.counters.droppedMedia++;
      else if (this.counters.droppedEvents++ === 0)
        this.options.onDrop?.(
          `recording to ${this.options.file} fell behind (${this.queue.length} messages waiting): events are being dropped from it; the count is printed when it closes`,
        );
      return;
    }
    this.queue.push({ topic: spec.topic, spec, message, atMs, media });
    if (media) this.pendingMedia++;
    this.kick();
  }

  /** Writes what is queued, ends the file (index and summary), and stops the flush timer. */
  async close(): Promise<RecorderStats> {
    if (this.closed) return this.stats;
    this.closed = true;
    clearInterval(this.timer);
    this.kick();
    while (this.draining) await this.draining;
    await this.endFile();
    return this.stats;
  }

  /** One writing loop at a time; it runs until the queue is empty (what arrives meanwhile is taken too). */
  private kick(): void {
    if (this.draining || this.queue.length === 0 || this.failed) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.failed) {
      const item = this.queue.shift()!;
      if (item.media) this.pendingMedia--;
      try {
        await this.add(item);
      } catch (err) {
        this.fail(err);
      }
    }
  }

  private async add(item: Pending): Promise<void> {
    const writer = this.writer;
    if (!writer) return;
    let id = this.channels.get(item.topic);
    if (id === undefined) {
      const spec = item.spec ?? { topic: item.topic, schemaName: '', schema: {} };
      const schemaId =
        spec.schemaName === ''
          ? 0
          : spec.ros2msg !== undefined
            ? await writer.registerSchema({ name: spec.schemaName, encoding: 'ros2msg', data: Buffer.from(spec.ros2msg) })
            : await writer.registerSchema({ name: spec.schemaName, encoding: 'jsonschema', data: Buffer.from(JSON.stringify(spec.schema)) });
      const messageEncoding = spec.schemaName === '' ? '' : spec.ros2msg !== undefined ? 'cdr' : 'json';
      id = await writer.registerChannel({ schemaId, topic: spec.topic, messageEncoding, metadata: new Map() });
      this.channels.set(item.topic, id);
    }
    const seq = (this.sequence.get(id) ?? 0) + 1;
    this.sequence.set(id, seq);
    const time = BigInt(Math.round(item.atMs)) * 1_000_000n;
    const made = typeof item.message === 'function' ? (item.message as () => unknown)() : item.message;
    const data = made instanceof Uint8Array ? made : Buffer.from(JSON.stringify(made));
    await writer.addMessage({ channelId: id, sequence: seq, logTime: time, publishTime: time, data });
    if (item.topic !== SYNC_TOPIC) {
      this.counters.messages++;
      this.counters.bytes += data.byteLength;
    }
    this.dirty = item.topic !== SYNC_TOPIC;
    this.fileBytes += data.byteLength;
    if (this.fileBytes >= this.rotateBytes) await this.rotate();
  }

  /** Closes the open chunk: a padding message on the sync topic pushes the chunk past its size. */
  private sync(): void {
    if (!this.dirty || this.closed || this.failed) return;
    this.dirty = false;
    const now = this.options.now?.() ?? Date.now();
    this.queue.push({ topic: SYNC_TOPIC, spec: SYNC_SPEC, message: syncMessage(CHUNK_BYTES + 1), atMs: now, media: false });
    this.kick();
  }

  private async openFile(): Promise<void> {
    this.handle = await open(this.options.file, 'w', 0o600);
    const writer = new McapWriter({ writable: new FileHandleWritable(this.handle), chunkSize: CHUNK_BYTES, compressChunk });
    await writer.start({ profile: '', library: 'cortexd' });
    const now = BigInt(Math.round(this.options.now?.() ?? Date.now())) * 1_000_000n;
    for (const a of this.options.attachments ?? [])
      await writer.addAttachment({ name: a.name, mediaType: a.mediaType, logTime: now, createTime: now, data: a.data });
    this.writer = writer;
    this.channels.clear();
    this.sequence.clear();
    this.fileBytes = 0;
    this.counters.files++;
  }

  private async endFile(): Promise<void> {
    const writer = this.writer;
    const handle = this.handle;
    this.writer = undefined;
    this.handle = undefined;
    try {
      await writer?.end();
    } catch (err) {
      this.fail(err);
    } finally {
      await handle?.close().catch(() => undefined);
    }
  }

  /** FILE.mcap -> FILE.1.mcap, FILE.1 -> FILE.2, ...; beyond `keep` the oldest is removed. */
  private async rotate(): Promise<void> {
    await this.endFile();
    const base = this.options.file.replace(/\.mcap$/i, '');
    const nth = (k: number) => `${base}.${k}.mcap`;
    await rm(nth(this.keep), { force: true });
    for (let k = this.keep - 1; k >= 1; k--) await rename(nth(k), nth(k + 1)).catch(() => undefined);
    if (this.keep > 0) await rename(this.options.file, nth(1));
    await this.openFile();
  }

  private fail(err: unknown): void {
    if (this.failed) return;
    this.failed = true;
    this.queue = [];
    this.pendingMedia = 0;
    this.options.onError?.(`recording to ${this.options.file} stopped: ${describeError(err)}`);
  }
}
