// A VLM stream: camera frames sampled, JPEG-encoded off the event loop and sent into a retrying vision socket session that emits vlm.* events
// Latest frame wins at every stage: a newer frame replaces one still waiting to be encoded or sent.
import { createActor, type Actor, type SimulatedClock } from 'xstate';
import type { Observable, OperatorFunction, Subscription } from 'rxjs';
import { sampleFps } from '../../src/pipelines/frame-sampler.js';
import { passFramesWhile, releaseFrame } from '../../src/pipelines/frame.js';
import { DEFAULT_JPEG_QUALITY, encodeJpegLatest, type EncodedFrame, type Frame } from '../../src/pipelines/jpeg.js';
import type { LatestWinsStats } from '../../src/pipelines/latest-wins.js';
import { FrameSender, type FrameSenderOptions, type FrameSenderStats } from './frame-sender.js';
import type { LinkConnector } from '../../src/cloud/link.js';
import { streamSessionLogic, type StreamSessionLogic, type SessionInput, type SessionTiming, type StreamCounters } from './session-machine.js';

export interface VlmStreamOptions {
  connect: LinkConnector;
  /** Camera frames (BGR mats); subscribed from start to stop. */
  frames$: Observable<Frame>;
  /** Frames per second sent at most (default 2; the hosted socket describes about one frame a second). */
  fps?: number;
  /** JPEG quality 0..100 (default 70). */
  quality?: number;
  /** Unsent bytes the socket may hold before a frame waits (default 0: one frame in flight). */
  maxBufferedBytes?: number;
  timing?: Partial<SessionTiming>;
  systemId?: string;
  now?: () => number;
  random?: () => number;
  /** Receives every event the session emits, from the first `connecting` on (registered before the actor starts). */
  onEvent?: (event: { type: string; [k: string]: unknown }) => void;
  clock?: SimulatedClock;
  /** Options of the sender (tests pass a virtual scheduler for its re-check timer). */
  sender?: FrameSenderOptions;
  /** Replaces the JPEG encoder (tests without OpenCV); default `encodeJpegLatest(quality)`. */
  encode?: OperatorFunction<Frame, EncodedFrame>;
  /** Hears every JPEG handed to a socket, with its capture time in ms (a recording, a live view); must not keep it. */
  onSent?: (jpeg: Buffer, atMs: number) => void;
}

/** Maps a vision socket message to `vlm.*` events: `{vlm_reply}` is a description, `{error}` a reported error. */
export function vlmEvents(message: unknown): Array<{ type: string; [k: string]: unknown }> {
  if (!message || typeof message !== 'object') return [];
  const m = message as { vlm_reply?: unknown; error?: unknown };
  if (typeof m.vlm_reply === 'string') return [{ type: 'vlm.reply', text: m.vlm_reply }];
  if (typeof m.error === 'string') return [{ type: 'vlm.error', message: m.error }];
  return [];
}

export interface VlmStreamStats extends FrameSenderStats {
  /** Frames the encoder skipped because a newer one arrived while it was busy. */
  encodeDropped: number;
  encoded: number;
  /** Sampled frames not encoded because no socket was open. */
  skippedDisconnected: number;
}

export interface VlmStream {
  actor: Actor<StreamSessionLogic>;
  stats(): VlmStreamStats;
  stop(): void;
}

/** The parts of a VLM session: the session machine's input and the frame pipeline that feeds each socket. */
export interface VlmSession {
  input: SessionInput;
  /** Starts the frame pipeline; `onError` hears a camera that failed (the owner restarts or gives up). */
  start(onError: (err: unknown) => void): void;
  stop(): void;
  stats(): VlmStreamStats;
}

/**
 * Builds a VLM session without starting an actor (the input actor runs the machine as its child
 * `stream:vlm`): sample to `fps` -> (only while a socket is open) encode latest-frame-wins -> send
 * latest-frame-wins on the socket's bufferedAmount. Rate: at most `fps`, less when the encoder or
 * socket is slower. Drop policy: latest frame wins at every stage; nothing is kept across a reconnect
 * (a stale picture is worth less than the next one); every frame is released once sent or dropped.
 * Reconnects follow the session machine's policy; 401 and 1008 stop the stream with the reason.
 * State events carry `frames_sent` and `frames_dropped` (every drop above, summed).
 */
export function vlmSession(options: Omit<VlmStreamOptions, 'systemId' | 'clock' | 'onEvent'>): VlmSession {
  const sender = new FrameSender({ ...options.sender, ...(options.maxBufferedBytes !== undefined ? { maxBufferedBytes: options.maxBufferedBytes } : {}) });
  const encodeStats: LatestWinsStats = { processed: 0, dropped: 0 };
  const encode = options.encode ?? encodeJpegLatest(options.quality ?? DEFAULT_JPEG_QUALITY, encodeStats);
  let skipped = 0;
  let pipeline: Subscription | undefined;
  const stats = (): VlmStreamStats => ({ ...sender.stats(), encodeDropped: encodeStats.dropped, encoded: encodeStats.processed, skippedDisconnected: skipped });
  const counters = (): StreamCounters => {
    const s = stats();
    return { frames_sent: s.sent, frames_dropped: s.replaced + s.droppedDisconnected + s.encodeDropped + s.skippedDisconnected };
  };
  const input: SessionInput = {
    prefix: 'vlm',
    connect: options.connect,
    ...(options.timing ? { timing: options.timing } : {}),
    ...(options.now ? { now: options.now } : {}),
    ...(options.random ? { random: options.random } : {}),
    hooks: {
      counters,
      attach: (link) =>
        sender.attach({
          sendFrame: (jpeg, ts) => {
            const sent = link.sendFrame?.(jpeg, ts) ?? false;
            if (sent) options.onSent?.(jpeg, ts * 1000);
            return sent;
          },
          bufferedAmount: () => link.bufferedAmount(),
        }),
      detach: () => sender.detach(),
      // Frames are the traffic; the vision protocol has no keepalive message.
      keepalive: () => undefined,
      onMessage: vlmEvents,
      isBenignClose: (code) => code === 1000,
    },
  };
  return {
    input,
    stats,
    start(onError) {
      pipeline ??= options.frames$
        .pipe(
          sampleFps({ fps: options.fps ?? 2, timeOf: (f: Frame) => f.capturedAt, onDrop: releaseFrame }),
          passFramesWhile(() => sender.attached || (skipped++, false)),
          encode,
        )
        .subscribe({ next: (frame) => sender.offer(frame), error: onError });
    },
    stop() {
      pipeline?.unsubscribe();
      pipeline = undefined;
      sender.detach();
    },
  };
}

/** A VLM session as its own root actor (benchmarks and stream tests); the agent runs sessions inside input actors. */
export function startVlmStream(options: VlmStreamOptions): VlmStream {
  const session = vlmSession(options);
  const actor = createActor(streamSessionLogic(), {
    systemId: options.systemId ?? 'vlm',
    ...(options.clock ? { clock: options.clock } : {}),
    input: session.input,
  });
  session.start((err: unknown) => actor.send({ type: 'link.fatal', reason: `camera stopped: ${err instanceof Error ? err.message : String(err)}` }));
  if (options.onEvent) actor.on('*', options.onEvent);
  actor.start();
  return {
    actor,
    stats: session.stats,
    stop() {
      session.stop();
      actor.send({ type: 'stop' });
      actor.stop();
    },
  };
}
