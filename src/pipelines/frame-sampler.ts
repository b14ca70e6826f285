// Samples a frame stream down to a target rate, keeping the frame schedule steady under jitter.
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike } from 'rxjs';

export interface SampleFpsOptions<T> {
  /** Target frames per second (> 0). */
  fps: number;
  /** Capture time of an item in ms; default: the scheduler's clock at arrival. */
  timeOf?: (item: T) => number;
  scheduler?: SchedulerLike;
  /**
   * Fraction of a period a frame may arrive early and still be taken (default 0.25): a 30 fps camera
   * sampled at 30 fps with jitter stays at 30, not 15.
   */
  tolerance?: number;
  /** Called with each item not taken (frames are released here: src/pipelines/frame.ts). */
  onDrop?: (item: T) => void;
}

/**
 * Rate: at most `fps` items per second on average; the first item is taken at once, then one per
 * period on a fixed schedule (slots that fall behind by more than a period are skipped, not caught
 * up in a burst). Drop policy: items arriving between slots are dropped (nothing is buffered).
 */
export function sampleFps<T>(options: SampleFpsOptions<T>): OperatorFunction<T, T> {
  if (!(options.fps > 0)) throw new RangeError(`fps must be positive, got ${options.fps}`);
  const period = 1000 / options.fps;
  const slack = period * (options.tolerance ?? 0.25);
  const scheduler = options.scheduler ?? asyncScheduler;
  const timeOf = options.timeOf ?? (() => scheduler.now());
  return (source) =>
    new Observable<T>((subscriber) => {
      let nextDue: number | undefined;
      return source.subscribe({
        next(item) {
          const t = timeOf(item);
          if (nextDue === undefined || t >= nextDue - slack) {
            nextDue = nextDue === undefined || t - nextDue > period ? t + period : nextDue + period;
            subscriber.next(item);
          } else options.onDrop?.(item);
        },
        error: (err) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
    });
}
