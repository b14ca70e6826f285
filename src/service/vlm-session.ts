// One vision socket session: validate frames, analyse the latest one at a bounded rate, send `{vlm_reply}` or `{error}` frames.
import type { WebSocket } from 'ws';
import { VlmClientMessageSchema } from '../cloud/protocol.js';
import { VisionAnalyser, describe } from './backends/vision.js';
import type { ServiceContext } from './context.js';
import type { VerifiedKey } from './keys.js';

/** Minimum time between two replies, in ms: frames arriving faster are dropped (latest frame wins). */
export const VLM_REPLY_EVERY_MS = 1000;

/**
 * Vision socket behaviour (decisions; the spec shows only `{vlm_reply}`):
 * - every valid frame is analysed unless a reply was sent less than VLM_REPLY_EVERY_MS ago, in which
 *   case it waits as "latest frame" and older waiting frames are dropped (a slow analyser never builds
 *   a queue); the first frame is answered at once;
 * - errors are `{error: "..."}` text frames: an invalid message or an undecodable frame is reported
 *   and the session continues; a missing vision backend is reported, then the socket closes (1011);
 * - vision is not metered (the price tables list no vision price).
 */
export function startVlmSession(ws: WebSocket, _key: VerifiedKey, ctx: ServiceContext): void {
  const log = ctx.logger.child({ socket: 'vlm' });
  let analyser: Promise<VisionAnalyser> | undefined;
  let waiting: Buffer | undefined;
  let busy = false;
  let lastReplyAt = 0;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const send = (msg: Record<string, unknown>): void => {
    if (!closed && ws.readyState === ws.OPEN) ws.send(JSON.stringify(msg));
  };

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
    const frame = waiting;
    waiting = undefined;
    busy = true;
    try {
      analyser ??= VisionAnalyser.create();
      let a: VisionAnalyser;
      try {
        a = await analyser;
      } catch (err) {
        send({ error: `Vision backend unavailable: ${err instanceof Error ? err.message : String(err)}` });
        ws.close(1011, 'vision backend unavailable');
        return;
      }
      try {
        send({ vlm_reply: describe(a.analyse(frame)) });
        lastReplyAt = Date.now();
      } catch (err) {
        send({ error: `Invalid frame: ${err instanceof Error ? err.message : String(err)}` });
      }
    } finally {
      busy = false;
    }
    void pump();
  };

  ws.on('message', (data, isBinary) => {
    if (isBinary) return send({ error: 'Invalid vision message: expected JSON text {timestamp, frame}' });
    let raw: unknown;
    try {
      raw = JSON.parse(data.toString());
    } catch {
      return send({ error: 'Invalid vision message: not valid JSON' });
    }
    const parsed = VlmClientMessageSchema.safeParse(raw);
    if (!parsed.success)
      return send({ error: `Invalid vision message: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}` });
    waiting = Buffer.from(parsed.data.frame, 'base64');
    void pump();
  });
  ws.on('close', () => {
    closed = true;
    if (timer) clearTimeout(timer);
  });
  ws.on('error', (err) => log.debug({ err }, 'socket error'));
}
