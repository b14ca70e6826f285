// One vision socket session: check each frame's header, analyse the latest one in the worker pool at a bounded rate, send `{vlm_reply}` or `{error}`.
import { randomUUID } from 'node:crypto';
import type { WebSocket } from 'ws';
import { VlmClientMessageSchema } from '../cloud/protocol.js';
import { describe } from './backends/vision.js';
import { oversize, readImageHeader, reductionFor } from './backends/image-header.js';
import type { ServiceContext } from './context.js';
import type { VerifiedKey } from './keys.js';
import { VisionBusyError, VisionUnavailableError } from './vision-pool.js';
import { boundedSender } from './ws-send.js';

/** Minimum time between two replies, in ms: frames arriving faster are dropped (latest frame wins). */
export const VLM_REPLY_EVERY_MS = 1000;

/**
 * Vision socket behaviour (decisions; the spec shows only `{vlm_reply}`):
 * - a frame's size is read from its JPEG/PNG header first: one that is not JPEG or PNG, larger than
 *   limits.vlmMaxSide / vlmMaxPixels (a PNG: vlmMaxPngPixels), or a JPEG of more than vlmMaxJpegScans
 *   scans, gets `{error: "Invalid frame: ..."}` and is never decoded;
 * - every valid frame is analysed unless a reply was sent less than VLM_REPLY_EVERY_MS ago, in which
 *   case it waits as "latest frame" and older waiting frames are dropped (a slow analyser never builds
 *   a queue); the first frame is answered at once;
 * - decoding and detection run in the vision worker pool (vision-pool.ts), never on the service's
 *   event loop, with frames of all keys served in turn; large JPEGs are decoded at 1/2, 1/4 or 1/8
 *   scale (longer side at most 1280 pixels);
 * - errors are `{error: "..."}` text frames: an invalid message or frame is reported and the session
 *   continues; `Vision busy: ...` when the pool's queue is full (the frame is dropped); a missing
 *   vision backend is reported, then the socket closes (1011);
 * - a client that does not read its replies is closed 1008 (ws-send.ts);
 * - vision is not metered (the price tables list no vision price).
 */
export function startVlmSession(ws: WebSocket, key: VerifiedKey, ctx: ServiceContext): void {
  const log = ctx.logger.child({ socket: 'vlm' });
  const vision = ctx.pools.vision.open(randomUUID(), key.keyId);
  const send = boundedSender(ws, ctx.limits.wsSendQueueBytes);
  const l = ctx.limits;
  const bounds = { maxSide: l.vlmMaxSide, maxPixels: l.vlmMaxPixels, maxPngPixels: l.vlmMaxPngPixels, maxJpegScans: l.vlmMaxJpegScans };
  let waiting: { frame: Buffer; reduce: 1 | 2 | 4 | 8 } | undefined;
  let busy = false;
  let lastReplyAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const pump = async (): Promise<void> => {
    if (busy || !waiting || closed) return;
    const wait = lastReplyAt + VLM_REPLY_EVERY_MS - Date.now();
    if (wait > 0) {
      timer ??= setTimeout(() => {
        timer = undefined;
        void pump();
      }, wait);
      return;
    }
    const { frame, reduce } = waiting;
    waiting = undefined;
    busy = true;
    try {
      send({ vlm_reply: describe(await vision.analyse(frame, reduce)) });
      lastReplyAt = Date.now();
    } catch (err) {
      if (closed) return;
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof VisionUnavailableError) {
        send({ error: `Vision backend unavailable: ${message}` });
        ws.close(1011, 'vision backend unavailable');
        return;
      }
      if (err instanceof VisionBusyError || message.startsWith('Vision backend failed')) send({ error: message });
      else send({ error: `Invalid frame: ${message}` });
    } finally {
      busy = false;
    }
    void pump();
  };

  ws.on('message', (data, isBinary) => {
    if (closed || ws.readyState !== ws.OPEN) return;
    if (isBinary) return void send({ error: 'Invalid vision message: expected JSON text {timestamp, frame}' });
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString());
    } catch {
      return void send({ error: 'Invalid vision message: not valid JSON' });
    }
    const parsed = VlmClientMessageSchema.safeParse(raw);
    if (!parsed.success)
      return void send({ error: `Invalid vision message: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` });
    const frame = Buffer.from(parsed.data.frame, 'base64');
    const header = readImageHeader(frame, ctx.limits.vlmMaxJpegScans);
    if (typeof header === 'string') return void send({ error: `Invalid frame: ${header}` });
    const tooBig = oversize(header, bounds);
    if (tooBig) return void send({ error: `Invalid frame: ${tooBig}` });
    waiting = { frame, reduce: reductionFor(header) };
    void pump();
  });
  ws.on('close', () => {
    closed = true;
    waiting = undefined;
    if (timer) clearTimeout(timer);
    vision.close();
  });
  ws.on('error', (err) => log.debug({ err }, 'socket error'));
}
