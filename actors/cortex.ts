// The cortex loop of one mode: ticks on a fixed schedule at the mode's hertz, never overlapping, woken at once by final input.
import { assign, createActor, fromPromise, setup, type Actor } from 'xstate';
import { realClock, type Clock } from './modes/types.js';

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
  clock?: Clock;
}

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
}

export type CortexLoopEvent = { type: 'loop.wake' };

/** Time of slot `k`: computed from the origin each time, so rounding never accumulates into drift. */
export const slotTime = (origin: number, hertz: number, k: number): number => origin + (k * 1000) / hertz;

/** The first slot at or after `t` (a slot due exactly at `t` has not been missed). */
export const firstSlotFrom = (origin: number, hertz: number, t: number): number => Math.max(0, Math.ceil(((t - origin) * hertz) / 1000 - 1e-9));

/**
 * The loop machine. Slot k is due at `origin + k / hertz` whatever earlier ticks took (no drift);
 * a tick runs to its end before the next starts, and every slot whose time passed while a tick ran
 * is skipped and counted (the loop never bursts to catch up). A `loop.wake` (a final transcript or a
 * typed line) runs a tick at once, or right after the running one; the schedule stays as it was.
 */
export function createCortexLoopMachine(options: CortexLoopOptions) {
  const clock = options.clock ?? realClock;
  const request = (ctx: LoopContext, wake: boolean): TickRequest => {
    const now = clock.now();
    const dueAt = wake ? now : slotTime(ctx.origin, ctx.hertz, ctx.next);
    return { seq: ctx.seq, slot: wake ? -1 : ctx.next, dueAt, startedAt: now, latenessMs: Math.max(0, now - dueAt), skipped: ctx.skipped, wake };
  };
  const finish = (ctx: LoopContext, outcome: { calledModel: boolean; error?: unknown }): Partial<LoopContext> => {
    const req = ctx.current!;
    const endedAt = clock.now();
    const after = req.wake ? ctx.next : req.slot + 1;
    const next = Math.max(after, firstSlotFrom(ctx.origin, ctx.hertz, endedAt));
    const skipped = ctx.skipped + (next - after);
    options.onTick?.({ ...req, skipped, endedAt, calledModel: outcome.calledModel, ...(outcome.error !== undefined ? { error: outcome.error } : {}) });
    return { next, skipped, current: null };
  };

  return setup({
    types: { context: {} as LoopContext, events: {} as CortexLoopEvent, input: {} as { hertz: number } },
    actors: { tick: fromPromise<TickResult, TickRequest>(({ input, signal }) => options.tick(input, signal)) },
    delays: {
      untilDue: ({ context }) => Math.max(0, slotTime(context.origin, context.hertz, context.next) - clock.now()),
    },
    guards: {
      wakePending: ({ context }) => context.wakePending,
      dueNow: ({ context }) => slotTime(context.origin, context.hertz, context.next) <= clock.now(),
    },
  }).createMachine({
    id: 'cortex',
    context: ({ input }) => ({
      origin: clock.now(),
      periodMs: 1000 / input.hertz,
      hertz: input.hertz,
      next: 0,
      seq: 0,
      skipped: 0,
      wakePending: false,
      current: null,
    }),
    initial: 'waiting',
    states: {
      waiting: {
        always: [
          { guard: 'wakePending', target: 'ticking', actions: assign(({ context }) => ({ wakePending: false, current: request(context, true) })) },
          // A slot due now starts without a zero-delay timer (one event-loop turn less, and exact under a simulated clock).
          { guard: 'dueNow', target: 'ticking', actions: assign(({ context }) => ({ current: request(context, false) })) },
        ],
        after: { untilDue: { target: 'ticking', actions: assign(({ context }) => ({ current: request(context, false) })) } },
        on: { 'loop.wake': { target: 'ticking', actions: assign(({ context }) => ({ current: request(context, true) })) } },
      },
      ticking: {
        entry: assign(({ context }) => ({ seq: context.seq + 1 })),
        on: { 'loop.wake': { actions: assign({ wakePending: true }) } },
        invoke: {
          src: 'tick',
          input: ({ context }) => context.current!,
          onDone: { target: 'waiting', actions: assign(({ context, event }) => finish(context, { calledModel: event.output.calledModel })) },
          onError: { target: 'waiting', actions: assign(({ context, event }) => finish(context, { calledModel: false, error: event.error })) },
        },
      },
    },
  });
}

export type CortexLoopActor = Actor<ReturnType<typeof createCortexLoopMachine>>;

/** Creates and starts a loop actor; `stop()` on it cancels the timer and aborts the running tick. */
export function startCortexLoop(options: CortexLoopOptions): CortexLoopActor {
  const actor = createActor(createCortexLoopMachine(options), { input: { hertz: options.hertz }, clock: options.clock ?? realClock });
  actor.start();
  return actor;
}
