// Echo suppression for the microphone pipeline: audio is replaced by silence while the robot's own speaker plays.
import { Observable, type OperatorFunction } from 'rxjs';

export interface MuteStats {
  /** Bytes replaced by silence since creation. */
  mutedBytes: number;
}

/**
 * While `muted$` is true, each chunk is replaced by a zero-filled chunk of the same length (so byte
 * accounting, timing and the server's clock stay intact, and the recognizer does not hear the robot
 * itself); otherwise chunks pass unchanged. Until `muted$` emits, audio passes.
 * Rate: that of the source. Drop policy: none (muted audio is silenced, not dropped).
 */
export function muteWhile(muted$: Observable<boolean>, stats?: MuteStats): OperatorFunction<Buffer, Buffer> {
  return (source) =>
    new Observable<Buffer>((subscriber) => {
      let muted = false;
      const control = muted$.subscribe({ next: (m) => (muted = m), error: (err) => subscriber.error(err) });
      const data = source.subscribe({
        next(chunk) {
          if (!muted) {
            subscriber.next(chunk);
            return;
          }
          if (stats) stats.mutedBytes += chunk.length;
          subscriber.next(Buffer.alloc(chunk.length));
        },
        error: (err) => subscriber.error(err),
        complete: () => subscriber.complete(),
      });
      return () => {
        control.unsubscribe();
        data.unsubscribe();
      };
    });
}
