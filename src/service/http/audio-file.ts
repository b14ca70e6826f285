// Synthesised audio goes to a private temporary file, then to the client from disk: JSON with base64 or raw bytes, never whole in memory.
import { createReadStream, createWriteStream } from 'node:fs';
import { type FileHandle, open, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { randomUUID } from 'node:crypto';
import { BackendError } from '../backends/chat.js';

export interface AudioFile {
  path: string;
  bytes: number;
  /** Deletes the file; safe to call more than once. */
  remove(): Promise<void>;
}

/**
 * Writes `audio` to a new file in `dir` (the service's 0700 temporary directory), at most `maxBytes`.
 * A failing stream, or more audio than that (with a `details` string), removes the file and
 * rejects with the spec's 500 `Failed to read response body`.
 */
export async function audioToFile(audio: Readable, dir: string, maxBytes: number, signal: AbortSignal): Promise<AudioFile> {
  const path = join(dir, `tts-${randomUUID()}.audio`);
  const remove = (): Promise<void> => rm(path, { force: true });
  let bytes = 0;
  const counted = async function* (source: AsyncIterable<Buffer | Uint8Array>) {
    for await (const chunk of source) {
      bytes += chunk.length;
      if (bytes > maxBytes) throw new BackendError(500, 'Failed to read response body', `the audio is larger than ${maxBytes} bytes`);
      yield chunk;
    }
  };
  try {
    await pipeline(audio, counted, createWriteStream(path, { mode: 0o600 }), { signal });
  } catch (err) {
    audio.destroy();
    await remove();
    if (err instanceof BackendError || signal.aborted) throw err;
    throw new BackendError(500, 'Failed to read response body');
  }
  return { path, bytes, remove };
}

/** Length of the base64 text of `n` bytes. */
export const base64Length = (n: number): number => 4 * Math.ceil(n / 3);

/**
 * A body `prefix + base64(file) + suffix`, read from disk in 48 KiB steps (a multiple of 3, so each
 * piece encodes on its own). Memory stays one piece per response, whatever the audio's length.
 */
export function base64JsonBody(file: AudioFile, prefix: string, suffix: string): { body: Readable; length: number } {
  const length = Buffer.byteLength(prefix) + base64Length(file.bytes) + Buffer.byteLength(suffix);
  async function* pieces() {
    yield Buffer.from(prefix);
    let carry = Buffer.alloc(0);
    for await (const chunk of createReadStream(file.path, { highWaterMark: 48 * 1024 })) {
      const data = carry.length ? Buffer.concat([carry, chunk as Buffer]) : (chunk as Buffer);
      const whole = data.length - (data.length % 3);
      carry = Buffer.from(data.subarray(whole));
      if (whole > 0) yield Buffer.from(data.subarray(0, whole).toString('base64'));
    }
    if (carry.length) yield Buffer.from(carry.toString('base64'));
    yield Buffer.from(suffix);
  }
  return { body: Readable.from(pieces(), { objectMode: false }), length };
}

/** The file's raw bytes as a stream (the binary endpoint). */
export function rawBody(file: AudioFile): Readable {
  return createReadStream(file.path, { highWaterMark: 64 * 1024 });
}

/** Bytes of a live response kept in memory for a client that keeps up (beyond this it reads from the file). */
const LIVE_MEMORY_BYTES = 256 * 1024;

/** Synthesised audio written to a file and, at the same time, read back from it for the client as it grows. */
export interface LiveAudioFile {
  /** The bytes as they are written (read from the file: a slow client costs disk, not memory). */
  body: Readable;
  /** The whole file, once the audio ended (rejects as audioToFile does). */
  file: Promise<AudioFile>;
}

/**
 * Like audioToFile, but the client need not wait for the end: `body` follows the file as it is
 * written (the streaming endpoint sends the first bytes as the synthesiser makes them). A failed
 * synthesis ends `body` with the error.
 */
// long: the file's writer and its reader share the progress (bytes written, chunks still in memory, end, failure) and one wake-up; one closure is their one owner.
export function audioToLiveFile(audio: Readable, dir: string, maxBytes: number, signal: AbortSignal): LiveAudioFile {
  const path = join(dir, `tts-${randomUUID()}.audio`);
  const remove = (): Promise<void> => rm(path, { force: true });
  let written = 0;
  let received = 0;
  /** Chunks not yet read by the client, kept while they fit LIVE_MEMORY_BYTES: a client that keeps up is served from memory, not read back. */
  const recent: Array<{ start: number; buf: Buffer }> = [];
  let recentBytes = 0;
  let ended = false;
  let failure: Error | undefined;
  let wake: (() => void) | undefined;
  const notify = (): void => {
    const w = wake;
    wake = undefined;
    w?.();
  };
  const created = open(path, 'w', 0o600);
  const file = (async (): Promise<AudioFile> => {
    const out = await created;
    try {
      for await (const chunk of audio) {
        signal.throwIfAborted();
        const buf = chunk as Buffer;
        if (written + buf.length > maxBytes) throw new BackendError(500, 'Failed to read response body', `the audio is larger than ${maxBytes} bytes`);
        if (recentBytes + buf.length <= LIVE_MEMORY_BYTES) {
          recent.push({ start: received, buf });
          recentBytes += buf.length;
        }
        received += buf.length;
        notify();
        await out.write(buf);
        written += buf.length;
        notify();
      }
    } catch (err) {
      audio.destroy();
      failure = err instanceof BackendError ? err : new BackendError(500, 'Failed to read response body');
      throw signal.aborted ? err : failure;
    } finally {
      ended = true;
      await out.close().catch(() => undefined);
      notify();
    }
    return { path, bytes: written, remove };
  })();
  file.catch(() => void remove());
  let reader: FileHandle | undefined;
  let offset = 0;
  const body = new Readable({
    highWaterMark: 64 * 1024,
    read(size) {
      void (async () => {
        try {
          await created;
          for (;;) {
            while (recent.length && recent[0]!.start < offset) recentBytes -= recent.shift()!.buf.length;
            if (recent[0]?.start === offset) {
              const { buf } = recent.shift()!;
              recentBytes -= buf.length;
              offset += buf.length;
              this.push(buf);
              return;
            }
            if (offset < written) {
              reader ??= await open(path, 'r');
              const buf = Buffer.alloc(Math.min(size || 64 * 1024, written - offset));
              const { bytesRead } = await reader.read(buf, 0, buf.length, offset);
              offset += bytesRead;
              this.push(buf.subarray(0, bytesRead));
              return;
            }
            if (failure) return void this.destroy(failure);
            if (ended) return void this.push(null);
            await new Promise<void>((resolve) => (wake = resolve));
          }
        } catch (err) {
          this.destroy(err as Error);
        }
      })();
    },
    destroy(err, done) {
      void (reader?.close() ?? Promise.resolve()).finally(() => done(err));
    },
  });
  return { body, file };
}
