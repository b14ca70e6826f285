// The cortex loop of one mode (actor `loop`): ticks on a fixed schedule at the mode's hertz, never overlapping, woken at once by final input.
import { assign, createActor, fromPromise, setup, type Actor, type AnyActorRef } from 'xstate';
import { ActorServices } from '../actor-services.js';
import { realClock, type Clock } from '../modes/types.js';

/** What a tick is told when it starts. */
export interface TickRequest {
  /** Sequence number of this tick in the mode (0, 1, 2...; wake ticks count too). */
  seq: number;
  /** Index of the scheduled slot this tick runs in, or -1 for a tick woken by a final input. */
  slot: number;
  /** Time the tick was due (the slot's time, or the wake time). */
  dueAt: number;
  startedAt: number;
  /** How far past `dueAt` the tick started, in ms. */
  latenessMs: number;
  /** Scheduled slots skipped so far in this mode because a tick was still running. */
  skipped: number;
  wake: boolean;
  /** Final texts (typed lines, final transcripts) that arrived since the last tick began, oldest first: the tick's to offer to keyword rules. */
  finals?: readonly string[];
}

export interface TickResult {
  calledModel: boolean;
}

/** A tick's work; must stop when `signal` aborts (the mode exits). Errors are reported, the loop goes on. */
export type TickFn = (req: TickRequest, signal: AbortSignal) => Promise<TickResult>;

export interface TickReport extends TickRequest {
  endedAt: number;
  calledModel: boolean;
  error?: unknown;
}

export interface CortexLoopOptions {
  hertz: number;
  tick: TickFn;
  /** Called after every tick (the agent emits the `tick` event and records metrics). */
  onTick?: (report: TickReport) => void;
  /** Must be the actor's clock too (a SimulatedClock in tests). */
  clock?: Pick<Clock, 'now'>;
  /** A partial transcript of input `id` (the turn is prepared on it while the person speaks). */
  onPartial?: (id: string, text: string) => void;
}

/** The loop's data; its tick, onTick, onPartial and clock are its services (`LoopServices`): contexts hold data. */
interface LoopContext {
  /** When slot 0 was due: the loop's start. */
  origin: number;
  periodMs: number;
  hertz: number;
  /** Next scheduled slot to run. */
  next: number;
  seq: number;
  skipped: number;
  /** A final input arrived while a tick ran: run one more at once when it ends. */
  wakePending: boolean;
  current: TickRequest | null;
  /** From now (when `waiting` was entered) to the next slot, in ms: at most 0 when it is due. */
  dueInMs: number;
  /** Finals not yet handed to a tick (at most MAX_FINALS, oldest dropped). */
  finals: readonly string[];
}

/** A final input arrived: run a tick now (or right after the running one); `text` is the final, kept for that tick's keyword rules. */
export type CortexLoopEvent = { type: 'loop.wake'; text?: string } | { type: 'loop.partial'; id: string; text: string };

const MAX_FINALS = 100;

/** Time of slot `k`: computed from the origin each time, so rounding never accumulates into drift. */
export const slotTime = (origin: number, hertz: number, k: number): number => origin + (k * 1000) / hertz;

/** The first slot at or after `t` (a slot due exactly at `t` has not been missed). */
export const firstSlotFrom = (origin: number, hertz: number, t: number): number => Math.max(0, Math.ceil(((t - origin) * hertz) / 1000 - 1e-9));

/** The services of the loops of one logic: each loop's options, by actor. */
type LoopServices = ActorServices<CortexLoopOptions>;

const nowOf = (svc: LoopServices, self: AnyActorRef) => (svc.of(self).clock ?? realClock).now();

/** The next tick's request; it takes the finals waiting so far (the loop's context keeps none of them). */
function request(svc: LoopServices, ctx: LoopContext, self: AnyActorRef, wake: boolean): Pick<LoopContext, 'current' | 'finals'> {
  const now = nowOf(svc, self);
  const dueAt = wake ? now : slotTime(ctx.origin, ctx.hertz, ctx.next);
  const req: TickRequest = {
    seq: ctx.seq,
    slot: wake ? -1 : ctx.next,
    dueAt,
    startedAt: now,
    latenessMs: Math.max(0, now - dueAt),
    skipped: ctx.skipped,
    wake,
  };
  if (ctx.finals.length) req.finals = ctx.finals;
  return { current: req, finals: [] };
}

const keepFinal = (ctx: LoopContext, event: CortexLoopEvent): readonly string[] =>
  event.type !== 'loop.wake' || event.text === undefined ? ctx.finals : [...ctx.finals, event.text].slice(-MAX_FINALS);

function finish(svc: LoopServices, ctx: LoopContext, self: AnyActorRef, outcome: { calledModel: boolean; error?: unknown }): Partial<LoopContext> {
  const req = ctx.current!;
  const endedAt = nowOf(svc, self);
  const after = req.wake ? ctx.next : req.slot + 1;
  const next = Math.max(after, firstSlotFrom(ctx.origin, ctx.hertz, endedAt));
  const skipped = ctx.skipped + (next - after);
  svc.of(self).onTick?.({ ...req, skipped, endedAt, calledModel: outcome.calledModel, ...(outcome.error !== undefined ? { error: outcome.error } : {}) });
  return { next, skipped, current: null };
}

/**
 * The loop machine; its input carries the rate, the tick function and the clock (the actor system's
 * clock). Slot k is due at `origin + k / hertz` whatever earlier ticks took (no drift); a tick runs to
 * its end before the next starts, and every slot whose time passed while a tick ran is skipped and
 * counted (the loop never bursts to catch up). A `loop.wake` (a final transcript or a typed line)
 * runs a tick at once, or right after the running one; the schedule stays as it was. The running
 * tick is a child promise actor: stopping the loop aborts its signal.
 */
export function cortexLoopLogic() {
  const svc: LoopServices = new ActorServices();
  return setup({
    types: { context: {} as LoopContext, events: {} as CortexLoopEvent, input: {} as CortexLoopOptions },
    actors: {
      tick: fromPromise<TickResult, { tick: TickFn; request: TickRequest }>(({ input, signal }) => input.tick(input.request, signal)),
    },
    delays: {
      untilDue: ({ context }) => Math.max(0, context.dueInMs),
    },
    guards: {
      wakePending: ({ context }) => context.wakePending,
      dueNow: ({ context }) => context.dueInMs <= 0,
    },
  }).createMachine({
    id: 'cortex',
    context: ({ input, self }) => {
      svc.keep(self, input);
      return {
        origin: (input.clock ?? realClock).now(),
        periodMs: 1000 / input.hertz,
        hertz: input.hertz,
        next: 0,
        seq: 0,
        skipped: 0,
        wakePending: false,
        current: null,
        dueInMs: 0,
        finals: [],
      };
    },
    initial: 'waiting',
    on: { 'loop.partial': { actions: ({ event, self }) => svc.of(self).onPartial?.(event.id, event.text) } },
    states: {
      waiting: {
        // The clock is read here, once per wait, so the guard and the delay below read data.
        entry: assign(({ context, self }) => ({ dueInMs: slotTime(context.origin, context.hertz, context.next) - nowOf(svc, self) })),
        always: [
          { guard: 'wakePending', target: 'ticking', actions: assign(({ context, self }) => ({ wakePending: false, ...request(svc, context, self, true) })) },
          // A slot due now starts without a zero-delay timer (one event-loop turn less, and exact under a simulated clock).
          { guard: 'dueNow', target: 'ticking', actions: assign(({ context, self }) => request(svc, context, self, false)) },
        ],
        after: { untilDue: { target: 'ticking', actions: assign(({ context, self }) => request(svc, context, self, false)) } },
        on: {
          'loop.wake': {
            target: 'ticking',
            actions: assign(({ context, event, self }) => request(svc, { ...context, finals: keepFinal(context, event) }, self, true)),
          },
        },
      },
      ticking: {
        tags: ['ticking'],
        entry: assign(({ context }) => ({ seq: context.seq + 1 })),
        on: { 'loop.wake': { actions: assign(({ context, event }) => ({ wakePending: true, finals: keepFinal(context, event) })) } },
        invoke: {
          id: 'tick',
          src: 'tick',
          input: ({ context, self }) => ({ tick: svc.of(self).tick, request: context.current! }),
          onDone: { target: 'waiting', actions: assign(({ context, event, self }) => finish(svc, context, self, { calledModel: event.output.calledModel })) },
          onError: { target: 'waiting', actions: assign(({ context, event, self }) => finish(svc, context, self, { calledModel: false, error: event.error })) },
        },
      },
    },
  });
}

export type CortexLoopActor = Actor<ReturnType<typeof cortexLoopLogic>>;

/** Creates and starts a loop as its own root actor (tests, benchmarks); `stop()` cancels the timer and aborts the running tick. */
export function startCortexLoop(options: CortexLoopOptions & { clock?: Clock }): CortexLoopActor {
  const actor = createActor(cortexLoopLogic(), { input: options, ...(options.clock ? { clock: options.clock } : {}) });
  actor.start();
  return actor;
}
