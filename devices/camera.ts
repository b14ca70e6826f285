// The camera: the Camera interface, and the real binding (OpenCV VideoCapture, 640x480 MJPG, buffer size 1).
import { Observable, Subject } from 'rxjs';
import type { Logger } from 'pino';
import type { Frame } from '../src/pipelines/jpeg.js';
import { loadOpenCV, cvCall, cvCallAsync, releaseMat, type OpenCV } from '../src/vision/opencv.js';
import { DeviceError, withRestarts } from './device-error.js';
import { fileFrames, syntheticFrames } from './camera-sim.js';
import { CameraConfigSchema, type CameraConfig, type OpenCvCameraConfig } from '../src/plugins/schemas/devices.js';

export {
  CameraConfigSchema,
  FileCameraSchema,
  OpenCvCameraSchema,
  SyntheticCameraSchema,
  type CameraConfig,
  type FileCameraConfig,
  type OpenCvCameraConfig,
  type SyntheticCameraConfig,
} from '../src/plugins/schemas/devices.js';

export type { Frame };

export interface Camera {
  readonly binding: 'opencv' | 'file' | 'synthetic';
  /**
   * Cold: each subscription opens the capture and emits BGR frames as they are captured (`seq`
   * counts from 0; `capturedAt` is ms since the epoch); unsubscribing releases the capture.
   */
  frames(): Observable<Frame>;
  readonly failures$: Observable<DeviceError>;
}

/** Opens a VideoCapture with the wanted size, codec and a one-frame driver buffer (so reads are fresh). */
export function openCapture(cv: OpenCV, config: Pick<OpenCvCameraConfig, 'device' | 'width' | 'height' | 'fps' | 'fourcc'>) {
  const cap = cvCall(`open camera ${String(config.device)}`, () => new cv.VideoCapture(config.device as never));
  const f = config.fourcc;
  const fourcc = f.charCodeAt(0) | (f.charCodeAt(1) << 8) | (f.charCodeAt(2) << 16) | (f.charCodeAt(3) << 24);
  // Drivers may refuse a property; the frames then show what they do deliver.
  cap.set(cv.CAP_PROP_FOURCC, fourcc);
  cap.set(cv.CAP_PROP_FRAME_WIDTH, config.width);
  cap.set(cv.CAP_PROP_FRAME_HEIGHT, config.height);
  cap.set(cv.CAP_PROP_FPS, config.fps);
  cap.set(cv.CAP_PROP_BUFFERSIZE, 1);
  return cap;
}

/**
 * One capture session: reads frames back to back (the driver paces them); errors when a read fails.
 * The capture is released only once no read is in flight, so teardown never frees a capture a libuv
 * thread is reading from; a frame read after teardown is released at once (src/pipelines/frame.ts).
 */
function captureOnce(config: OpenCvCameraConfig, seqStart: { next: number }): Observable<Frame> {
  return new Observable<Frame>((subscriber) => {
    let stopped = false;
    const loop = (async () => {
      const cv = await loadOpenCV();
      if (stopped) return;
      const cap = openCapture(cv, config);
      try {
        while (!stopped) {
          const mat = await cvCallAsync('read camera', () => cap.readAsync());
          if (stopped) {
            releaseMat(mat);
            break;
          }
          if (mat.empty) throw new DeviceError('camera', `camera ${String(config.device)} returned no frame (unplugged?)`);
          subscriber.next({ mat, capturedAt: Date.now(), seq: seqStart.next++ });
        }
      } finally {
        cap.release();
      }
    })();
    loop.catch((err: unknown) => {
      if (!stopped) subscriber.error(DeviceError.from('camera', err));
    });
    return () => {
      stopped = true;
    };
  });
}

export interface CameraContext {
  logger?: Logger;
}

export function createCamera(config: CameraConfig, ctx: CameraContext = {}): Camera {
  const parsed = CameraConfigSchema.parse(config);
  const failures = new Subject<DeviceError>();
  const base = { binding: parsed.binding, failures$: failures.asObservable() } as const;
  switch (parsed.binding) {
    case 'opencv':
      return {
        ...base,
        frames: () => {
          const seq = { next: 0 };
          return withRestarts(
            'camera',
            () => captureOnce(parsed, seq),
            { initialMs: parsed.restart_initial_ms, maxMs: parsed.restart_max_ms },
            failures,
            ctx.logger,
          );
        },
      };
    case 'file':
      return { ...base, frames: () => fileFrames(parsed) };
    case 'synthetic':
      return { ...base, frames: () => syntheticFrames(parsed) };
  }
}
