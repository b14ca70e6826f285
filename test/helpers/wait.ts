// Waiting in tests for a condition or an actor event, with a deadline: never a fixed sleep.

/** Resolves with `fn()` once it is not undefined, checking after each turn of the event loop; rejects after `ms`. */
export async function waitFor<T>(fn: () => T | undefined, ms = 3000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setImmediate(r));
  }
}

/** Something whose actor emits events (the stream actors). */
export type Actorish = { actor: { on(type: string, fn: (e: unknown) => void): { unsubscribe(): void } } };

/** Resolves with the first `type` event the actor emits that satisfies `pred`; rejects after `ms`. */
export function onEvent(
  stream: Actorish,
  type: string,
  pred: (e: Record<string, unknown>) => boolean = () => true,
  ms = 15_000,
): Promise<Record<string, unknown>> {
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no ${type} within ${ms} ms`)), ms);
    timer.unref();
    const sub = stream.actor.on(type, (e) => {
      if (!pred(e as never)) return;
      clearTimeout(timer);
      sub.unsubscribe();
      resolve(e as never);
    });
  });
}
