// Waits for a DDS endpoint's first match on the event of its match count, not by polling it.
import { fromEvent, map, NEVER, type Observable, filter, firstValueFrom, of, race, take, timeout } from 'rxjs';

/**
 * Resolves true once `matched$` (a reader's or writer's count of matched peers) is above 0, at once
 * when it already is; false after `ms` without a match. Rejects with the signal's reason when `signal`
 * aborts first.
 */
export function whenMatched(matched$: Observable<number>, ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.reject(signal.reason);
  const matched = matched$.pipe(
    filter((n) => n > 0),
    take(1),
    map(() => true),
    timeout({ first: Math.max(0, ms), with: () => of(false) }),
  );
  const aborted = signal
    ? fromEvent(signal, 'abort').pipe(
        map(() => {
          throw signal.reason;
        }),
      )
    : NEVER;
  return firstValueFrom(race(matched, aborted));
}
