// LocalVLMInput: faces and motion described on the robot with OpenCV (no network); the newest description becomes the "Vision: ..." line.
import { Observable, defer, finalize, from, map, switchMap } from 'rxjs';
import { z } from 'zod';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import type { PluginSpec } from '../../src/plugin-registry.js';
import { sampleFps } from '../../src/pipelines/frame-sampler.js';
import { latestWins, type LatestWinsStats } from '../../src/pipelines/latest-wins.js';
import { consumeFrame, releaseFrame, type Frame } from '../../src/pipelines/frame.js';
import { VisionAnalyser, describe, type FrameAnalysis } from '../../src/vision/analyse.js';
import { CameraConfigSchema, createCamera, type Camera } from '../../devices/camera.js';
import { BufferedInput, CommonInputFields } from './buffered-input.js';

export const LocalVLMInputSchema = z.looseObject({
  ...CommonInputFields,
  /** The camera binding (`opencv`, `file` or `synthetic`). */
  camera: CameraConfigSchema.prefault({ binding: 'opencv' }),
  /** Frames analysed per second at most. */
  fps: z.number().positive().max(30).default(1),
});
export type LocalVLMInputConfig = z.output<typeof LocalVLMInputSchema>;

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
  readonly stats: LatestWinsStats = { processed: 0, dropped: 0 };

  constructor(
    private readonly config: LocalVLMInputConfig,
    private readonly camera: Camera,
    ctx?: Pick<InputContext, 'logger' | 'signal'>,
  ) {
    super({
      type: 'LocalVLMInput',
      descriptor: config.descriptor ?? 'Vision',
      bufferSize: config.buffer_size,
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
            consumeFrame((frame: Frame) => from(analyser.analyseMat(frame.mat)).pipe(map((analysis) => ({ analysis, at: frame.capturedAt })))),
            this.stats,
            releaseFrame,
          ),
          finalize(() => analyser.dispose()),
        ),
      ),
      map(({ analysis, at }) => ({ text: describe(analysis), analysis, at })),
    );
  }

  rawToText(raw: LocalVisionRaw): InputMessage | undefined {
    return { timestamp: raw.at, text: raw.text, final: false };
  }
}

const create: InputFactory = (raw, ctx) => {
  const config = LocalVLMInputSchema.parse(raw ?? {});
  return new LocalVlmInput(config, createCamera(config.camera, { logger: ctx.logger }), ctx);
};

export const localVlmInputSpec: PluginSpec<InputFactory> = {
  type: 'LocalVLMInput',
  description: 'faces and motion from the camera, described on the robot with OpenCV (no network)',
  schema: LocalVLMInputSchema,
  create,
};
