// The one loader of @u4/opencv4nodejs: sets its environment, silences its log, and turns thrown strings into typed errors.
import { arch } from 'node:process';
import type { Mat } from '@u4/opencv4nodejs';
import { CortexError, describeError } from '../errors.js';

/** The OpenCV namespace as the binding exports it (classes, functions and constants). */
export type OpenCV = typeof import('@u4/opencv4nodejs').cv;
export type { Mat };

/** OpenCV failed: the native module could not load, or a call threw (the binding throws strings). */
export class OpenCvError extends CortexError {
  constructor(code: 'opencv_unavailable' | 'opencv_failed', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'OpenCvError';
  }
}

/** Where Debian keeps the system OpenCV libraries for this architecture. */
export function systemOpenCvLibDir(architecture: string = arch): string {
  if (architecture === 'arm64') return '/usr/lib/aarch64-linux-gnu';
  if (architecture === 'arm') return '/usr/lib/arm-linux-gnueabihf';
  return '/usr/lib/x86_64-linux-gnu';
}

let loading: Promise<OpenCV> | undefined;
let loaded: OpenCV | undefined;

/**
 * Loads OpenCV once per process. Before the dynamic import it sets what the binding needs to use the
 * system build instead of trying to compile its own (`OPENCV4NODEJS_DISABLE_AUTOBUILD`,
 * `OPENCV_LIB_DIR` by architecture, unless already set), lowers OpenCV's native log level to errors
 * (GStreamer warnings otherwise reach stderr), and silences opencv-build's `Info:` lines.
 *
 * It always turns the binding's external memory tracking off (`OPENCV4NODEJS_DISABLE_EXTERNAL_MEM_TRACKING`).
 * That tracker is a cv::MatAllocator that calls V8's AdjustAmountOfExternalAllocatedMemory from
 * whichever main-thread allocation or deallocation comes next, including a Mat freed by a GC
 * finalizer; Mats allocated by the `*Async` calls on libuv's pool are reported late, so such a
 * finalizer reports a positive change in the middle of a collection and V8 aborts the process
 * (`Check failed: marking_done_` in CppHeap::TraceEpilogue, seen when camera modes switch quickly).
 * Without the tracker V8 does not see Mat memory, so every owner releases its Mats explicitly
 * (src/pipelines/frame.ts states the rule); memory then does not depend on when GC runs.
 * Rejects with `OpenCvError('opencv_unavailable')` when the native module is missing or broken;
 * a failed load is not cached, so a later call retries.
 */
export function loadOpenCV(): Promise<OpenCV> {
  if (loaded) return Promise.resolve(loaded);
  loading ??= (async () => {
    process.env.OPENCV4NODEJS_DISABLE_AUTOBUILD ??= '1';
    process.env.OPENCV_LIB_DIR ??= systemOpenCvLibDir();
    process.env.OPENCV_LOG_LEVEL ??= 'ERROR';
    // Read by the addon when it loads (any value disables it); see above for why it must be off.
    process.env.OPENCV4NODEJS_DISABLE_EXTERNAL_MEM_TRACKING = '1';
    try {
      const build = await import('@u4/opencv-build');
      build.Log.silence = true;
    } catch {
      // opencv-build only prints; without it the binding still loads (with its Info: lines).
    }
    try {
      const mod = await import('@u4/opencv4nodejs');
      const cv = (mod.default ?? mod.cv) as OpenCV;
      if (typeof cv?.imencode !== 'function') throw new Error('the binding exports no imencode');
      loaded = cv;
      return cv;
    } catch (err) {
      loading = undefined;
      throw new OpenCvError('opencv_unavailable', `OpenCV is not available: ${describeError(err)}`, { cause: err });
    }
  })();
  return loading;
}

/** The OpenCV namespace if `loadOpenCV()` has already resolved (for hot paths that must not await). */
export function openCvIfLoaded(): OpenCV | undefined {
  return loaded;
}

/** Wraps anything OpenCV threw (usually a string) into an `OpenCvError` naming the operation. */
export function toOpenCvError(operation: string, err: unknown): OpenCvError {
  if (err instanceof OpenCvError) return err;
  return new OpenCvError('opencv_failed', `${operation}: ${describeError(err)}`, { cause: err });
}

/**
 * Frees a Mat's pixels now instead of at some later garbage collection. Safe on a Mat that an
 * `*Async` call is still using: the worker holds its own reference to the pixels, so they are freed
 * when it finishes. Safe twice; never throws (a Mat freed here is just empty afterwards).
 */
export function releaseMat(mat: Mat | undefined | null): void {
  if (!mat) return;
  try {
    mat.release();
  } catch {
    // A released or foreign object: nothing left to free.
  }
}

/** Runs a synchronous OpenCV call; a thrown string becomes an `OpenCvError`. */
export function cvCall<T>(operation: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    throw toOpenCvError(operation, err);
  }
}

/** Runs an asynchronous OpenCV call (the `*Async` variants run on libuv's pool); rejections become `OpenCvError`. */
export async function cvCallAsync<T>(operation: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw toOpenCvError(operation, err);
  }
}
