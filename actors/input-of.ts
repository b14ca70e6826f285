// The input an actor was started with, read by its own actions: where its services are (contexts hold only data).
import type { AnyActorRef } from 'xstate';

/**
 * The `input` actor `self` was created with (`createActor(logic, { input })`, an invoke's or a
 * spawn's input). XState keeps it on the actor (`Actor.options.input`), outside the snapshot, so an
 * actor's services (logger, bus, clock, connectors' factories) reach its actions without entering its
 * context, and `--inspect` shows contexts as they are.
 */
export function inputOf<T>(self: AnyActorRef): T {
  const options = (self as unknown as { options?: { input?: T } }).options;
  // Pinned by test/unit/input-of.test.ts; should XState stop keeping it, fail by name rather than with a TypeError deep in an action.
  if (!options) throw new Error(`actor ${self.id} has no options: this XState version does not keep an actor's input (actors/input-of.ts)`);
  return options.input as T;
}
