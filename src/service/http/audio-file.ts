// Synthesised audio goes to a private temporary file, then to the client from disk: JSON with base64 or raw bytes, never whole in memory.
import { createReadStream, createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
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
