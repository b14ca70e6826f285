// Waiting in tests for a condition, an actor event or a bus event, with a deadline: never a fixed sleep.
import { filter, firstValueFrom, throwError, timeout } from 'rxjs';
import type { AgentBus, AgentEvent } from '../../src/cortex/events.js';

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

/**
 * Resolves with `fn()` once it is truthy, checked every `everyMs`; rejects after `ms` with "timed out
 * waiting for <what>" (`what` may be a function, to say what was seen instead). The deadline is a hang
 * guard on a loaded machine, never a measure. For what a process or a peer does outside this one
 * (a file appears, a child exits); what the bus says is better awaited with `onBus`.
 */
export async function until<T>(what: string | (() => string), fn: () => T | undefined | null | false, ms = 60_000, everyMs = 10): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Resolves with the first event on `bus` from now on that satisfies `pred`; rejects after `ms` with
 * "timed out waiting for <what>". Subscribe before causing the event (it does not replay the past).
 */
export function onBus<E extends AgentEvent = AgentEvent>(
  bus: AgentBus,
  pred: ((e: AgentEvent) => e is E) | ((e: AgentEvent) => boolean),
  what: string | (() => string),
  ms = 60_000,
): Promise<E> {
  return firstValueFrom(
    bus.events$.pipe(
      filter(pred as (e: AgentEvent) => e is E),
      timeout({ first: ms, with: () => throwError(() => new Error(`timed out waiting for ${typeof what === 'string' ? what : what()}`)) }),
    ),
  );
}
