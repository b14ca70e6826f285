// The services each actor of one logic was started with, kept by that logic: how its actions reach them while its context holds only data.
import type { AnyActorRef } from 'xstate';

/**
 * One logic's services, by actor. The logic's context factory, which XState gives the actor's `input`
 * and `self` (its documented `ContextFactory` arguments), keeps them; the logic's actions, guards and
 * invoke inputs read them by `self`. Each logic factory makes its own (never at module level); an
 * actor's entry is dropped with the actor.
 */
export class ActorServices<T> {
  readonly #byActor = new WeakMap<AnyActorRef, T>();

  /** Called by the context factory: `services` are what actor `self` uses until it stops. */
  keep(self: AnyActorRef, services: T): void {
    this.#byActor.set(self, services);
  }

  /** The services of actor `self`; fails by name when its context factory kept none (a logic wired wrongly). */
  of(self: AnyActorRef): T {
    const services = this.#byActor.get(self);
    if (services === undefined) throw new Error(`actor ${self.id} has no services: its logic's context factory did not keep them (actors/actor-services.ts)`);
    return services;
  }
}
