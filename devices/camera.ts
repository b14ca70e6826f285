// The camera: the Camera interface, and the real binding (OpenCV VideoCapture) as a device a session actor opens
// The binding captures 640x480 MJPG with a buffer size of 1; one open capture is one link.
import { Observable, type Subscriber } from 'rxjs';
import type { Frame } from '../src/pipelines/jpeg.js';
import { loadOpenCV, cvCall, cvCallAsync, releaseMat, type OpenCV } from '../src/vision/opencv.js';
import { describeError } from '../src/errors.js';
import type { StreamLink } from '../src/cloud/link.js';
import { DeviceError } from './device-error.js';
import { LinkEnd, type OpenableDevice } from './device-link.js';
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
   * BGR frames as they are captured (`seq` counts from 0; `capturedAt` is ms since the epoch). File and
   * synthetic: cold, each subscription opens its own source, unsubscribing releases it. OpenCV: hot, the
   * frames of the capture `device` runs while a session actor holds it open; one reader at a time.
   */
  frames(): Observable<Frame>;
  /**
   * A device to open and reopen (the OpenCV capture): its owner runs it in a session actor
   * (actors/streams/device-session.ts), which reopens it with the backoff and breaker of
   * src/backoff.ts. Absent for bindings with nothing to reopen.
   */
  readonly device?: OpenableDevice;
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

/** One run of the capture as a link: its frames go to `sink` (released when none), its end is the link's `close`. */
interface CaptureLink extends StreamLink {
  sink: ((frame: Frame) => void) | undefined;
  /** Starts the reads (once attached: no frame is read for nobody). */
  start(): void;
}

const isCaptureLink = (link: StreamLink): link is CaptureLink => 'sink' in link;

/** The close code of a link whose capture ended (1006 with a reason: the engine says the reason as it is). */
const CAPTURE_ENDED = 1006;

/**
 * Opens the capture once. Resolves when OpenCV has opened it; rejects (typed) when it cannot (fatal
 * when OpenCV itself is missing). Once attached, reads frames back to back (the driver paces them) until a read fails
 * or returns nothing (unplugged, the end of a file), which is the link's `close`; `close()` stops the
 * reads. The capture is released only once no read is in flight, so it is never freed while a libuv
 * thread reads from it; a frame read after the end is released at once (src/pipelines/frame.ts).
 */
async function openCaptureRun(config: OpenCvCameraConfig, signal: AbortSignal, seq: { next: number }): Promise<CaptureLink> {
  const name = String(config.device);
  let cv: OpenCV;
  try {
    cv = await loadOpenCV();
  } catch (err) {
    throw new DeviceError('camera', `cannot open camera ${name}: ${describeError(err)}`, {
      cause: err,
      ...((err as { code?: unknown }).code === 'opencv_unavailable' ? { fatal: true } : {}),
    });
  }
  if (signal.aborted) throw new DeviceError('camera', 'opening cancelled');
  let cap: ReturnType<typeof openCapture>;
  try {
    cap = openCapture(cv, config);
  } catch (err) {
    // OpenCV's error names the operation (`open camera <device>: ...`).
    throw DeviceError.from('camera', err);
  }
  const ends = new LinkEnd();
  let begin = () => {};
  const started = new Promise<void>((resolve) => (begin = resolve));
  let closing = false;
  const ended = (err: unknown) => {
    if (closing) return;
    closing = true;
    ends.end({ type: 'close', code: CAPTURE_ENDED, reason: DeviceError.from('camera', err).message });
  };
  const link: CaptureLink = {
    sink: undefined,
    bufferedAmount: () => 0,
    // An end between the open and this subscription is not lost.
    subscribe: (listener) => ends.subscribe(listener),
    start: () => begin(),
    close() {
      closing = true;
      begin();
    },
  };
  void (async () => {
    try {
      await started;
      while (!closing) {
        const mat = await cvCallAsync('read camera', () => cap.readAsync());
        if (closing) {
          releaseMat(mat);
          break;
        }
        if (mat.empty) throw new DeviceError('camera', `camera ${name} returned no frame (unplugged?)`);
        const frame = { mat, capturedAt: Date.now(), seq: seq.next++ };
        if (link.sink) link.sink(frame);
        else releaseMat(mat);
      }
    } finally {
      cap.release();
    }
  })().catch(ended);
  return link;
}

/**
 * The `opencv` binding. Its capture is open while a session actor holds the device open
 * (`device.connect`, the VLM input's child `device:camera`, or the local vision worker's own session);
 * the actor reopens it with the engine's backoff and breaker when a read fails. `frames()` is hot and
 * has one reader at a time (a frame has one owner): the frames of whichever run is open.
 */
function createOpenCvCamera(config: OpenCvCameraConfig): Camera {
  const seq = { next: 0 };
  let reader: Subscriber<Frame> | undefined;
  const device: OpenableDevice = {
    connect: (signal) => openCaptureRun(config, signal, seq),
    attach: (link) => {
      if (!isCaptureLink(link)) throw new DeviceError('camera', 'not a capture link');
      link.sink = (frame) => (reader ? reader.next(frame) : releaseMat(frame.mat));
      link.start();
      return () => {
        link.sink = undefined;
      };
    },
    backoff: { initialMs: config.restart_initial_ms, maxMs: config.restart_max_ms },
  };
  return {
    binding: 'opencv',
    device,
    frames: () =>
      new Observable<Frame>((subscriber) => {
        if (reader) return subscriber.error(new DeviceError('camera', 'the camera already has a reader (a frame has one owner)'));
        reader = subscriber;
        return () => {
          if (reader === subscriber) reader = undefined;
        };
      }),
  };
}

export function createCamera(config: CameraConfig): Camera {
  const parsed = CameraConfigSchema.parse(config);
  switch (parsed.binding) {
    case 'opencv':
      return createOpenCvCamera(parsed);
    case 'file':
      return { binding: 'file', frames: () => fileFrames(parsed) };
    case 'synthetic':
      return { binding: 'synthetic', frames: () => syntheticFrames(parsed) };
  }
}
