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
 * Rejects with `OpenCvError('opencv_unavailable')` when the native module is missing or broken;
 * a failed load is not cached, so a later call retries.
 */
export function loadOpenCV(): Promise<OpenCV> {
  if (loaded) return Promise.resolve(loaded);
  loading ??= (async () => {
    process.env.OPENCV4NODEJS_DISABLE_AUTOBUILD ??= '1';
    process.env.OPENCV_LIB_DIR ??= systemOpenCvLibDir();
    process.env.OPENCV_LOG_LEVEL ??= 'ERROR';
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
