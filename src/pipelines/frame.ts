// Camera frames and who frees them: a frame's native image is released exactly once, by the stage that drops it or finishes with it.
import { Observable, defer, from, finalize, type MonoTypeOperatorFunction, type ObservableInput } from 'rxjs';
import { releaseMat, type Mat } from '../vision/opencv.js';

/** One captured image. `mat` is an OpenCV BGR image; `capturedAt` is ms since the epoch. */
export interface Frame {
  mat: Mat;
  capturedAt: number;
  /** Position in the capture stream, from 0; gaps show dropped frames. */
  seq: number;
}

/*
 * Ownership. V8 does not see the memory of a Mat (src/vision/opencv.ts turns the binding's tracker
 * off because it crashes the process), so a frame left to the garbage collector may hold its 1 MB of
 * pixels for a long time. The rule: a camera hands each frame to its one subscriber, which owns it;
 * every stage that drops a frame (sampling, latest-wins, a closed socket) releases it, and the last
 * stage releases it when its work ends, fails or is cancelled. A frame is never shared between two
 * subscribers (file and synthetic cameras are cold: each subscription opens its own source; an OpenCV
 * camera, opened by a session actor, has one reader at a time).
 */

/** Frees the frame's pixels now; safe twice and while an async OpenCV call still reads them. */
export function releaseFrame(frame: Frame): void {
  releaseMat(frame.mat);
}

/** Passes frames while `pass()` is true, releasing the ones it holds back. */
export function passFramesWhile(pass: () => boolean): MonoTypeOperatorFunction<Frame> {
  return (source) =>
    new Observable<Frame>((subscriber) =>
      source.subscribe({
        next(frame) {
          if (pass()) subscriber.next(frame);
          else releaseFrame(frame);
        },
        error: (err) => subscriber.error(err),
        complete: () => subscriber.complete(),
      }),
    );
}

/**
 * The last stage's work on a frame, as an observable that releases the frame once the work has
 * ended, failed or been cancelled (an unsubscribed async call keeps its own reference to the pixels).
 */
export function consumeFrame<R>(work: (frame: Frame) => ObservableInput<R>): (frame: Frame) => Observable<R> {
  return (frame) => defer(() => from(work(frame))).pipe(finalize(() => releaseFrame(frame)));
}
