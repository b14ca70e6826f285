// Runs async work on one item at a time, keeping only the newest item that arrives meanwhile (latest-frame-wins).
import { Observable, from, type ObservableInput, type OperatorFunction, type Subscription } from 'rxjs';

export interface LatestWinsStats {
  /** Items handed to the work function. */
  processed: number;
  /** Items replaced by a newer one before work could start on them. */
  dropped: number;
}

/**
 * Applies `work` to one item at a time. While work is running, at most one item waits: a newer
 * arrival replaces it (counted in `stats.dropped`). So a consumer slower than the producer never
 * builds a queue: memory stays at one running plus one waiting item, and what it processes is the
 * freshest. `onDrop` lets the owner release an item that will never be worked on: replaced by a
 * newer one, or still waiting when the output is unsubscribed (for example a native image).
 * Rate: that of the consumer, at most that of the source. Drop policy: latest wins.
 */
export function latestWins<T, R>(work: (item: T) => ObservableInput<R>, stats?: LatestWinsStats, onDrop?: (item: T) => void): OperatorFunction<T, R> {
  return (source) =>
    new Observable<R>((subscriber) => {
      let waiting: { item: T } | undefined;
      let running: Subscription | undefined;
      let sourceDone = false;

      const start = (item: T): void => {
        if (stats) stats.processed += 1;
        let finished = false;
        const sub = from(work(item)).subscribe({
          next: (value) => subscriber.next(value),
          error: (err) => subscriber.error(err),
          complete: () => {
            finished = true;
            running = undefined;
            const next = waiting;
            waiting = undefined;
            if (next) start(next.item);
            else if (sourceDone) subscriber.complete();
          },
        });
        if (!finished) running = sub;
      };

      const input = source.subscribe({
        next(item) {
          if (!running) {
            start(item);
            return;
          }
          if (waiting) {
            if (stats) stats.dropped += 1;
            onDrop?.(waiting.item);
          }
          waiting = { item };
        },
        error: (err) => subscriber.error(err),
        complete() {
          sourceDone = true;
          if (!running && !waiting) subscriber.complete();
        },
      });
      return () => {
        input.unsubscribe();
        running?.unsubscribe();
        // The waiting item will never be worked on: give it back to its owner.
        if (waiting) onDrop?.(waiting.item);
        waiting = undefined;
      };
    });
}
