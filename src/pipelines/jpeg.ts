// Encodes camera frames to JPEG with OpenCV (async, off the event loop) and frames them as vision socket messages.
import type { OperatorFunction } from 'rxjs';
import { loadOpenCV, cvCall, cvCallAsync } from '../vision/opencv.js';
import { consumeFrame, releaseFrame, type Frame } from './frame.js';
import { latestWins, type LatestWinsStats } from './latest-wins.js';

export type { Frame };

export interface EncodedFrame {
  jpeg: Buffer;
  capturedAt: number;
  seq: number;
  width: number;
  height: number;
}

/** The vision socket's client message: Unix time of capture in seconds and base64 JPEG. */
export interface VlmOutgoingMessage {
  timestamp: number;
  frame: string;
}

export const DEFAULT_JPEG_QUALITY = 70;

function checkQuality(quality: number): number {
  if (!Number.isInteger(quality) || quality < 0 || quality > 100) throw new RangeError(`JPEG quality must be 0..100, got ${quality}`);
  return quality;
}

/** Encodes on the calling thread (for tests and tiny images). */
export async function encodeJpegSync(frame: Frame, quality: number = DEFAULT_JPEG_QUALITY): Promise<EncodedFrame> {
  checkQuality(quality);
  const cv = await loadOpenCV();
  const jpeg = cvCall('imencode', () => cv.imencode('.jpg', frame.mat, [cv.IMWRITE_JPEG_QUALITY, quality]));
  return { jpeg, capturedAt: frame.capturedAt, seq: frame.seq, width: frame.mat.cols, height: frame.mat.rows };
}

/** Encodes on libuv's thread pool (`imencodeAsync`), so a 640x480 frame does not block the event loop. */
export async function encodeJpeg(frame: Frame, quality: number = DEFAULT_JPEG_QUALITY): Promise<EncodedFrame> {
  checkQuality(quality);
  const cv = await loadOpenCV();
  const jpeg = await cvCallAsync('imencodeAsync', () => cv.imencodeAsync('.jpg', frame.mat, [cv.IMWRITE_JPEG_QUALITY, quality]));
  return { jpeg, capturedAt: frame.capturedAt, seq: frame.seq, width: frame.mat.cols, height: frame.mat.rows };
}

/**
 * Encodes frames one at a time off the event loop. Rate: as fast as the encoder allows, at most the
 * source's. Drop policy: latest-frame-wins (a frame arriving while one is encoding replaces the
 * waiting one; `stats.dropped` counts them), so a slow encoder never builds a queue. Owns the frames
 * it receives: each is released once encoded or replaced (src/pipelines/frame.ts).
 */
export function encodeJpegLatest(quality: number = DEFAULT_JPEG_QUALITY, stats?: LatestWinsStats): OperatorFunction<Frame, EncodedFrame> {
  checkQuality(quality);
  return latestWins(
    consumeFrame((frame: Frame) => encodeJpeg(frame, quality)),
    stats,
    releaseFrame,
  );
}

/** The vision socket message for an encoded frame. */
export function toVlmMessage(frame: EncodedFrame): VlmOutgoingMessage {
  return { timestamp: frame.capturedAt / 1000, frame: frame.jpeg.toString('base64') };
}
