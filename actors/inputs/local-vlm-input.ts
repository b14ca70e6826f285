// LocalVLMInput: faces and motion described on the robot with OpenCV (no network); the newest description becomes the "Vision: ..." line.
import { type Observable, defer, finalize, from, map, switchMap, tap } from 'rxjs';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { LocalVLMInputSchema, type LocalVLMInputConfig } from '../../src/plugins/schemas/inputs.js';
import { sampleFps } from '../../src/pipelines/frame-sampler.js';
import { latestWins, type LatestWinsStats } from '../../src/pipelines/latest-wins.js';
import { consumeFrame, releaseFrame, type Frame } from '../../src/pipelines/frame.js';
import { VisionAnalyser, describe, visionContext, type FrameAnalysis } from '../../src/vision/analyse.js';
import { createCamera, type Camera } from '../../devices/camera.js';
import { visionChanged } from '../../src/cortex/wake.js';
import { encodeJpeg } from '../../src/pipelines/jpeg.js';
import { describeError } from '../../src/errors.js';
import { BufferedInput } from './buffered-input.js';

export { LocalVLMInputSchema, type LocalVLMInputConfig };

export interface LocalVisionRaw {
  text: string;
  analysis: FrameAnalysis;
  /** Capture time of the analysed frame, ms since the epoch. */
  at: number;
}

/**
 * Listening opens the camera; frames are sampled to `fps` and analysed one at a time, latest frame
 * wins (an analysis slower than the camera never builds a queue; `stats.dropped` counts skipped
 * frames). The description is the service's (`describe`), so the prompt reads the same offline and
 * hosted. The buffer keeps only the newest; messages are `final: false`. Every frame is released
 * once analysed or dropped (src/pipelines/frame.ts).
 */
export class LocalVlmInput extends BufferedInput<LocalVisionRaw> {
  /** Failures the device recovers from itself (reopened after its backoff), for the bus. */
  get deviceFailures$() {
    return this.camera.failures$.pipe(map((e) => ({ message: e.message, ...(e.retryInMs !== undefined ? { retryInMs: e.retryInMs } : {}) })));
  }

  readonly stats: LatestWinsStats = { processed: 0, dropped: 0 };

  constructor(
    private readonly config: LocalVLMInputConfig,
    private readonly camera: Camera,
    private readonly ctx?: Pick<InputContext, 'logger' | 'signal' | 'publishContext'> & Partial<Pick<InputContext, 'media'>>,
  ) {
    super({
      type: 'LocalVLMInput',
      descriptor: config.descriptor ?? 'Vision',
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'latest',
      ...(ctx?.logger ? { logger: ctx.logger } : {}),
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
    });
  }

  protected source(): Observable<LocalVisionRaw> {
    // One analyser per listening session: motion compares consecutive analysed frames of this camera.
    return defer(() => from(VisionAnalyser.create())).pipe(
      switchMap((analyser) =>
        this.camera.frames().pipe(
          sampleFps({ fps: this.config.fps, timeOf: (f: Frame) => f.capturedAt, onDrop: releaseFrame }),
          latestWins(
            consumeFrame((frame: Frame) => from(this.analyse(analyser, frame))),
            this.stats,
            releaseFrame,
          ),
          finalize(() => analyser.dispose()),
        ),
      ),
      map(({ analysis, at }) => ({ text: describe(analysis), analysis, at })),
      tap((raw) => this.publish(raw.analysis)),
    );
  }

  private published = '';
  /** Until when someone watches (WebSim asked for a frame): analysed frames are also kept as JPEG. */
  private watchedUntil = 0;
  private lastJpeg: { jpeg: Buffer; at: number } | undefined;

  /** The newest analysed frame as JPEG; asking keeps frames encoded for the next 5 s (the first ask may get none yet). */
  readonly preview = {
    frame: async (): Promise<{ jpeg: Buffer; at: number } | undefined> => {
      this.watchedUntil = Date.now() + 5000;
      return this.lastJpeg;
    },
  };

  /**
   * Analyses one frame and, while someone watches or a recording runs, keeps it as JPEG (encoded off the
   * event loop, before the frame is released) and hands it to the recording.
   */
  private async analyse(analyser: VisionAnalyser, frame: Frame): Promise<{ analysis: FrameAnalysis; at: number }> {
    const analysis = await analyser.analyseMat(frame.mat);
    const media = this.ctx?.media;
    if (Date.now() < this.watchedUntil || media) {
      try {
        const encoded = await encodeJpeg(frame, 70);
        this.lastJpeg = { jpeg: encoded.jpeg, at: frame.capturedAt };
        media?.frame(this.type, encoded.jpeg, frame.capturedAt);
      } catch (err) {
        this.logger?.warn(`LocalVLMInput: preview frame not encoded: ${describeError(err)}`);
      }
    } else this.lastJpeg = undefined;
    return { analysis, at: frame.capturedAt };
  }

  /** Context for `context_aware` rules when it changes: `faces` (how many are seen) and `motion` (none, slight, strong). */
  private publish(a: FrameAnalysis): void {
    const values = visionContext(a.faces.length, a.motion);
    const key = JSON.stringify(values);
    if (key === this.published) return;
    this.published = key;
    this.ctx?.publishContext?.(values);
  }

  /** A meaningful change: the count of faces or the motion level (`wake_on`), not the percentage of motion. */
  protected override changed(previous: string, next: string): boolean {
    return visionChanged(previous, next, this.config.wake_on);
  }

  protected toMessage(raw: LocalVisionRaw): InputMessage | undefined {
    return { timestamp: raw.at, text: raw.text, final: false };
  }
}

/** The LocalVLMInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createLocalVlmInput: InputFactory = (raw, ctx) => {
  const config = LocalVLMInputSchema.parse(raw ?? {});
  return new LocalVlmInput(config, createCamera(config.camera, { logger: ctx.logger }), ctx);
};
