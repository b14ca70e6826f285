// The simulated cameras: a video file read by OpenCV at its frame rate, or generated frames with a moving shape.
import { Observable, asyncScheduler, type SchedulerLike } from 'rxjs';
import type { Frame } from '../src/pipelines/jpeg.js';
import { loadOpenCV, cvCall, cvCallAsync, releaseMat, type OpenCV, type Mat } from '../src/vision/opencv.js';
import { DeviceError } from './device-error.js';
import type { FileCameraConfig, SyntheticCameraConfig } from '../src/plugins/schemas/devices.js';

/**
 * Calls `tick(n)` at start + n * period on `scheduler`, never overlapping (an async tick that overruns
 * makes the next slot come at once; slots more than one period late are skipped, so there is no burst).
 */
function paced(periodMs: number, tick: (n: number) => Promise<boolean> | boolean, onError: (err: unknown) => void, scheduler: SchedulerLike) {
  const start = scheduler.now();
  let n = 0;
  let stopped = false;
  let action: { unsubscribe(): void } | undefined;
  const run = async () => {
    try {
      const more = await tick(n);
      if (!more || stopped) return;
      n += 1;
      let due = start + n * periodMs;
      const now = scheduler.now();
      if (now - due > periodMs) {
        n = Math.floor((now - start) / periodMs) + 1;
        due = start + n * periodMs;
      }
      action = scheduler.schedule(() => void run(), Math.max(0, due - now));
    } catch (err) {
      if (!stopped) onError(err);
    }
  };
  action = scheduler.schedule(() => void run(), 0);
  return () => {
    stopped = true;
    action?.unsubscribe();
  };
}

/**
 * Frames of a video file at `fps` (default the file's), looping or completing at the end. The capture
 * is released only after the read in flight (on libuv's pool) has returned; a frame read after
 * teardown is released at once.
 */
export function fileFrames(config: FileCameraConfig, scheduler: SchedulerLike = asyncScheduler): Observable<Frame> {
  return new Observable<Frame>((subscriber) => {
    let stop: (() => void) | undefined;
    let cap: { readAsync(): Promise<Mat>; release(): void } | undefined;
    let closed = false;
    let seq = 0;
    let reading: Promise<unknown> = Promise.resolve();
    const read = (): Promise<Mat> => {
      const p = cvCallAsync('read video', () => cap!.readAsync());
      reading = p.catch(() => undefined);
      return p;
    };
    const open = (cv: OpenCV) => cvCall(`open video ${config.file}`, () => new cv.VideoCapture(config.file));
    loadOpenCV()
      .then((cv) => {
        if (closed) return;
        const first = open(cv);
        cap = first;
        const fileFps = first.get(cv.CAP_PROP_FPS);
        const fps = config.fps ?? (fileFps > 0 && fileFps < 1000 ? fileFps : 30);
        stop = paced(
          1000 / fps,
          async () => {
            let mat = await read();
            if (mat.empty) {
              if (!config.loop) {
                subscriber.complete();
                return false;
              }
              cap!.release();
              cap = open(cv);
              mat = await read();
              if (mat.empty) throw new DeviceError('camera', `${config.file} has no frames`);
            }
            if (closed) {
              releaseMat(mat);
              return false;
            }
            subscriber.next({ mat, capturedAt: Date.now(), seq: seq++ });
            return true;
          },
          (err) => subscriber.error(DeviceError.from('camera', err)),
          scheduler,
        );
      })
      .catch((err: unknown) => subscriber.error(DeviceError.from('camera', err)));
    return () => {
      closed = true;
      stop?.();
      void reading.then(() => cap?.release());
    };
  });
}

const backgrounds = new WeakMap<OpenCV, Map<string, Mat>>();

/**
 * Draws frame `n`: dark background, a disc moving left to right, and the frame number. The
 * background is made once per size and copied (the binding's fill-value Mat constructor costs
 * tens of ms at 640x480; a copy costs under one).
 */
export function drawSyntheticFrame(cv: OpenCV, width: number, height: number, n: number): Mat {
  let bySize = backgrounds.get(cv);
  if (!bySize) backgrounds.set(cv, (bySize = new Map()));
  const key = `${width}x${height}`;
  let background = bySize.get(key);
  if (!background) bySize.set(key, (background = new cv.Mat(height, width, cv.CV_8UC3, [40, 30, 20])));
  const mat = background.copy();
  const x = Math.round(((n * 8) % (width + 80)) - 40);
  mat.drawCircle(new cv.Point2(x, Math.round(height / 2)), Math.round(height / 8), new cv.Vec3(60, 180, 240), -1);
  mat.putText(`#${n}`, new cv.Point2(10, 30), cv.FONT_HERSHEY_SIMPLEX, 0.8, new cv.Vec3(255, 255, 255), 2);
  return mat;
}

/** Generated frames at `fps`; completes after `frames` when set. */
export function syntheticFrames(config: SyntheticCameraConfig, scheduler: SchedulerLike = asyncScheduler): Observable<Frame> {
  return new Observable<Frame>((subscriber) => {
    let stop: (() => void) | undefined;
    let closed = false;
    let emitted = 0;
    loadOpenCV()
      .then((cv) => {
        if (closed) return;
        stop = paced(
          1000 / config.fps,
          (n) => {
            if (closed) return false;
            // `seq` is the slot number, so slots skipped under load show as gaps; `frames` counts emitted frames.
            subscriber.next({ mat: drawSyntheticFrame(cv, config.width, config.height, n), capturedAt: Date.now(), seq: n });
            emitted += 1;
            if (config.frames !== undefined && emitted >= config.frames) {
              subscriber.complete();
              return false;
            }
            return !closed;
          },
          (err) => subscriber.error(DeviceError.from('camera', err)),
          scheduler,
        );
      })
      .catch((err: unknown) => subscriber.error(DeviceError.from('camera', err)));
    return () => {
      closed = true;
      stop?.();
    };
  });
}
