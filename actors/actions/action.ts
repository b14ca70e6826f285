// One action of a mode as an XState actor (`action:<llm_label>`): validates commands, applies its queue policy, runs them through its connector.
import { BehaviorSubject, Observable, distinctUntilChanged } from 'rxjs';
import { and, assign, createActor, enqueueActions, fromCallback, fromPromise, sendParent, setup, type ActorRefFrom, type AnyActorRef } from 'xstate';
import { streamSessionMachine, type SessionInput } from '../streams/session-machine.js';
import { withStatesOnBus } from '../streams/device-session.js';
import type { z } from 'zod';
import type { ActionConfig } from '../../src/config/schema.js';
import type { ActionConnector, CommandJob, CommandMark } from '../../src/cortex/action.js';
import type { StreamLink } from '../../src/cloud/link.js';
import type { ActionDescriptor } from '../../src/plugins/types.js';
import { argsFor } from '../../src/plugins/args.js';
import type { ActionHandle, ActionHandleDeps } from '../../src/cortex/contracts.js';
import { inputOf } from '../input-of.js';
import type { ActionState, AgentEvent } from '../../src/cortex/events.js';
import { CortexError, describeError } from '../../src/errors.js';

/** A command that did not complete: invalid value, connector failure, dropped from the queue or interrupted. */
export class ActionError extends CortexError {
  readonly state: Exclude<ActionState, 'queued' | 'running' | 'done'>;
  constructor(state: ActionError['state'], message: string, options?: { cause?: unknown }) {
    super(`action_${state}`, message, options);
    this.name = 'ActionError';
    this.state = state;
  }

  /** True when the command was cut short because its action stopped (its mode was left or the agent stopped). */
  get actionStopped(): boolean {
    return this.message.endsWith(`: ${ACTION_STOPPED}`);
  }
}

/**
 * Most commands one action keeps waiting (policy `queue`). A newer command past this drops the oldest
 * waiting one (reported `dropped`, counted in `overflowed` on the bus): newest wins, so a flood of
 * answers (typed lines, fleet `say`) never builds an unbounded line of speech, each holding its clip.
 */
export const ACTION_QUEUE_LIMIT = 16;

/** Why a command ends when its action actor stops. */
export const ACTION_STOPPED = 'action stopped';

export interface Command {
  id: number;
  value: unknown;
  origin: 'model' | 'hook';
  /** Called once when the command leaves the actor (run() waits on it). */
  settle?: (err?: ActionError) => void;
  /** Hears the command's moments (synthesis first byte, playback start). */
  mark?: (mark: CommandMark, at: number) => void;
  /** CU the connector reported spent on this command so far; on the command's last event as `cost_cu`. */
  spentCu?: number;
  /** The connector's head start on this command (`prepare`), and what aborts it when the command leaves. */
  prepared?: { result: unknown; abort: AbortController };
}

/** What the safety governor (actors/safety/governor.ts) answers a motion action, or tells it to do. */
export type SafetyReply =
  | { type: 'safety.granted'; id: number }
  | { type: 'safety.refused'; id: number; reason: string }
  | { type: 'safety.halt'; reason: string };

export type ActionEvent =
  | { type: 'action.command'; command: Command }
  | { type: 'action.interrupt' }
  | { type: 'action.cancel'; id: number }
  /** Context values a connector published (a conversation's state): on the bus and to the mode machine, as inputs' are. */
  | { type: 'action.context'; values: Record<string, unknown> }
  | SafetyReply;

/** Why a motion command is refused when no governor runs. */
const NO_GOVERNOR = 'no safety governor is running, so motion is refused';

/** The system id of the safety governor in the agent's tree. */
export const SAFETY_ID = 'safety';

export interface ActionActorInput {
  entry: ActionConfig;
  /** Includes the plugins: the action's descriptor (arguments, queue policy) and its loaded connector. */
  deps: ActionHandleDeps;
  /** Given the connector's asynchronous stop when the actor stops, so the agent can wait for it. */
  track?: (closing: Promise<unknown>) => void;
  /** The safety governor, for an action actor that is its own root; in the agent's tree it is found by its system id. */
  safety?: AnyActorRef;
}

/**
 * The action actor's data. Its services (deps, track, safety) stay in its input (`inputOf`); its
 * connector and the commands it holds (their callers' callbacks, a prepared head start) are its own,
 * kept by its logic per actor (`Own`); the context names commands by id.
 */
interface ActionContext {
  entry: ActionConfig;
  /** Why the connector could not be made (every command then fails with that reason). */
  broken: string | undefined;
  /** The connector moves the robot: every command first asks the safety governor, and halts go to it. */
  motion: boolean;
  /** The connector ends its commands as they return (`runSync`). */
  sync: boolean;
  /** Ids of the commands waiting, oldest first. */
  pending: number[];
  /** Id of the command being authorized or run. */
  current: number | undefined;
  /** Commands dropped so far because the queue was full (ACTION_QUEUE_LIMIT). */
  overflowed: number;
}

/** What one action actor owns outside its snapshot. */
interface Own {
  /** The action's descriptor, or undefined when it could not be found (then `broken` says why). */
  spec: ActionDescriptor | undefined;
  connector: ActionConnector | undefined;
  /** The commands waiting or running, by id; a command leaves when it is reported done, failed, dropped or interrupted. */
  commands: Map<number, Command>;
  /** The actor's input's deps (kept here too: one lookup per report instead of two). */
  deps: ActionHandleDeps;
  /**
   * The halt the actor's stop sent (a motion connector's stop line, written), set by the owner's
   * cleanup: the connector's session lets go of its link (a serial port closes) only once it settled.
   */
  halting: Promise<void> | undefined;
}

/** Where a report goes and what it says of the queue: the action's services and entry, its queue now. */
interface At {
  deps: ActionHandleDeps;
  entry: ActionConfig;
  pending?: readonly number[];
  overflowed?: number;
  commands?: Map<number, Command>;
}

/**
 * Accepts a bare string for an action whose arguments are one string (or enum) field, so hooks can write
 * `value: "hello"` for speak and `value: "sit"` for move; anything else is validated as given.
 */
export function coerceValue(args: z.ZodType, value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const shape = (args as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (!shape) return value;
  const keys = Object.keys(shape);
  return keys.length === 1 ? { [keys[0]!]: value } : value;
}

function issuesText(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join('.') || '(value)'}: ${i.message}`).join('; ');
}

/** Builds the connector of an entry; throws a PluginError naming the known connectors when it is unknown. */
export function createConnector(entry: ActionConfig, deps: ActionHandleDeps, publishContext?: (values: Record<string, unknown>) => void): ActionConnector {
  const spec = deps.plugins.connector(entry.name, entry.connector);
  const made = spec.create(entry.config ?? {}, {
    logger: deps.logger,
    stateDir: deps.stateDir,
    write: deps.write,
    ...(deps.cloud ? { cloud: deps.cloud } : {}),
    ...(publishContext ? { publishContext } : {}),
    ...(deps.browserAudio ? { browserAudio: deps.browserAudio } : {}),
    ...(deps.positions ? { positions: deps.positions } : {}),
    ...(deps.bodies ? { bodies: deps.bodies } : {}),
    ...(deps.media ? { media: deps.media } : {}),
  });
  if (spec.motion && typeof made.halt !== 'function') throw new Error(`connector ${entry.connector} of ${entry.name} moves the robot but has no halt()`);
  return made;
}

/** The governor this action asks: the one given, else the agent tree's (`safety`), when it runs. */
function governorOf(self: AnyActorRef): AnyActorRef | undefined {
  const ref = inputOf<ActionActorInput>(self).safety ?? (self.system.get(SAFETY_ID) as AnyActorRef | undefined);
  return ref && ref.getSnapshot().status === 'active' ? ref : undefined;
}

/** What a connector may tell about a command while it prepares or runs it: its moments and the CU it cost. */
function jobOf(command: Command): CommandJob {
  // Built field by field: spreading optional parts was a visible share of a tick.
  const job: CommandJob = {
    charge: (cu) => {
      if (cu > 0) command.spentCu = (command.spentCu ?? 0) + cu;
    },
  };
  if (command.mark) job.mark = command.mark;
  return job;
}

/**
 * Reports a command's new state on the bus (and in the log when it failed) and settles its run()
 * caller. `queue` is the number of commands waiting after this change (default: the context's).
 */
function report(ctx: At, command: Command, state: ActionState, error?: string, queue?: number): void {
  const { entry, deps } = ctx;
  // Built field by field in the event's order (three events per command: spreads were a visible share of a tick).
  const event: Extract<AgentEvent, { type: 'action' }> = {
    type: 'action',
    at: Date.now(),
    mode: deps.mode,
    label: entry.llm_label,
    name: entry.name,
    connector: entry.connector,
    state,
    value: command.value,
  };
  if (error !== undefined) event.error = error;
  event.queue = queue ?? ctx.pending?.length ?? 0;
  if (ctx.overflowed) event.overflowed = ctx.overflowed;
  if (state !== 'queued' && state !== 'running' && command.spentCu) event.cost_cu = command.spentCu;
  deps.bus.emit(event);
  if (state === 'failed') deps.logger.warn({ action: entry.llm_label, origin: command.origin }, `${entry.llm_label} failed: ${error ?? ''}`);
  if (state !== 'queued' && state !== 'running') {
    ctx.commands?.delete(command.id);
    command.prepared?.abort.abort(new ActionError('interrupted', `${entry.llm_label}: ${state}`));
  }
  if (state === 'done') command.settle?.();
  else if (state === 'failed' || state === 'dropped' || state === 'interrupted') {
    command.settle?.(new ActionError(state, `${entry.llm_label}: ${error ?? state}`));
  }
}

/**
 * The command as the connector will get it (its value parsed by the action's arguments, its `prepare`
 * started), or undefined when it failed here (reported `failed` and settled).
 */
function validated(at: At, context: ActionContext, own: Own, command: Command): Command | undefined {
  if (context.broken !== undefined || !own.spec) return report(at, command, 'failed', context.broken ?? 'no such action'), undefined;
  const args = argsFor(own.spec, context.entry.config);
  const parsed = args.safeParse(coerceValue(args, command.value));
  if (!parsed.success) return report(at, command, 'failed', `invalid value for ${context.entry.llm_label}: ${issuesText(parsed.error)}`), undefined;
  const accepted: Command = { ...command, value: parsed.data };
  const connector = own.connector;
  if (connector?.prepare) {
    // Streamed speech: synthesis starts when a sentence is queued, not when its turn comes.
    const abort = new AbortController();
    try {
      accepted.prepared = { result: connector.prepare(parsed.data, abort.signal, jobOf(accepted)), abort };
    } catch (err) {
      return report(at, command, 'failed', describeError(err)), undefined;
    }
  }
  return accepted;
}

/**
 * Runs one command of a connector that ends its commands before returning (`runSync`): reports it
 * `running`, then `done` or `failed`, and settles its caller, all in the step that took it.
 */
function runNow(ctx: At, connector: ActionConnector, command: Command): void {
  report(ctx, command, 'running');
  try {
    const job = jobOf(command);
    if (command.prepared) job.prepared = command.prepared.result;
    connector.runSync!(command.value, job);
  } catch (err) {
    report(ctx, command, 'failed', describeError(err));
    return;
  }
  report(ctx, command, 'done');
}

/** How long a stopping action's session holds its link for a halt whose write hangs (a wedged port): a hang guard. */
export const HALT_RELEASE_MS = 2000;

/**
 * `session` whose links, when closed, are let go only after the halt `halting()` gives (if any) settled,
 * or after HALT_RELEASE_MS: the action actor's stop sets it before its session child is stopped. A link
 * closed while no halt is under way (an unplug, a reconnect) is let go at once.
 */
function releasedAfter(session: SessionInput, halting: () => Promise<void> | undefined): SessionInput {
  return {
    ...session,
    connect: async (signal) => {
      const link = await session.connect(signal);
      // The link's methods, bound to it (a link can be a class instance: a spread would lose them), with its close held.
      const held: StreamLink = {
        bufferedAmount: () => link.bufferedAmount(),
        subscribe: (listener) => link.subscribe(listener),
        close: (...args) => {
          const halt = halting();
          if (!halt) return link.close(...args);
          let guard: NodeJS.Timeout | undefined;
          const hung = new Promise<void>((resolve) => {
            guard = setTimeout(resolve, HALT_RELEASE_MS);
            guard.unref();
          });
          void Promise.race([halt, hung]).then(() => {
            clearTimeout(guard);
            link.close(...args);
          });
        },
      };
      if (link.sendAudio) held.sendAudio = (pcm) => link.sendAudio!(pcm);
      if (link.endUtterance) held.endUtterance = () => link.endUtterance!();
      if (link.sendFrame) held.sendFrame = (jpeg, at) => link.sendFrame!(jpeg, at);
      return held;
    },
  };
}

/**
 * The action statechart: `idle` until a command is pending, then `running` (tag `busy`) invokes the
 * connector with an AbortSignal that XState aborts when `running` is left (interrupt, cancel, stop).
 * A connector with `runSync` (a printed line, a bus event) has nothing to interrupt: `idle` runs its
 * commands in the step that queued them, with no child actor or signal, and never enters `running`.
 * With policy `latest` a new command replaces the pending one (reported `dropped`); with `queue` it
 * waits its turn. Values are validated against the action's arguments on arrival (an invalid one is
 * reported `failed`, never thrown). The connector is made when the actor starts and stopped when it
 * stops; what is running or queued then is reported `interrupted`/`dropped` and its callers settled.
 *
 * A motion connector (descriptor `motion: true`) is gated: every command, from the model or a hook,
 * passes `authorizing`, where the safety governor grants or refuses it (refused: `failed` with the
 * governor's reason); no other state runs the connector, and without a running governor every motion
 * command is refused. `safety.halt` from the governor interrupts what runs, drops the queue and calls
 * the connector's `halt()`; stopping the actor halts the connector before closing it.
 *
 * The context is data: the services come through the input, and the logic keeps each of
 * its actors' connector and commands by actor, so a mode makes one logic for its actions.
 */
export function actionLogic() {
  /** Each actor's own connector and commands, by actor (made when it starts, dropped with it). */
  const owns = new WeakMap<AnyActorRef, Own>();
  const own = (self: AnyActorRef): Own => owns.get(self)!;
  /** The report target of actor `self` with context `c`. */
  const at = (self: AnyActorRef, c: Pick<ActionContext, 'entry' | 'pending' | 'overflowed'>): At => {
    const o = own(self);
    return { deps: o.deps, entry: c.entry, pending: c.pending, overflowed: c.overflowed, commands: o.commands };
  };
  /** Reports the current command, if any. */
  const reportCurrent = (self: AnyActorRef, c: ActionContext, state: ActionState, error?: string) => {
    const command = c.current === undefined ? undefined : own(self).commands.get(c.current);
    if (command) report(at(self, c), command, state, error);
  };
  /** Reports every waiting command `state` (dropped) and settles its caller. */
  const reportPending = (self: AnyActorRef, c: ActionContext, ids: readonly number[], error: string, queue?: number) => {
    const a = at(self, c);
    for (const id of ids) {
      const command = a.commands!.get(id);
      if (command) report(a, command, 'dropped', error, queue);
    }
  };
  /** The owner's start and stop: the action's registration with the governor, and its stop path (report, halt, stop the connector). */
  const ownerInput = (self: AnyActorRef, context: ActionContext) => ({
    // A motion action tells the governor it exists, so a halt (e-stop, dead-man, stopping) reaches it.
    onStart: () => {
      if (context.motion) governorOf(self)?.send({ type: 'safety.register', key: self.sessionId, ref: self });
    },
    onStop: () => {
      const last = self.getSnapshot().context;
      reportCurrent(self, last, 'interrupted', ACTION_STOPPED);
      reportPending(self, last, last.pending, ACTION_STOPPED);
      if (context.motion) governorOf(self)?.send({ type: 'safety.unregister', key: self.sessionId });
      const o = own(self);
      const connector = o.connector;
      if (!connector) return;
      const { deps, track } = inputOf<ActionActorInput>(self);
      // Its device session stops with this actor (a stopped actor emits nothing more): say so on the bus.
      const kind = (connector.session as SessionInput | undefined)?.prefix;
      if (kind === 'serial') deps.bus.emit({ type: 'stream', at: Date.now(), kind, input: context.entry.llm_label, state: 'stopped' });
      const log = (what: string) => (err: unknown) => deps.logger.warn(`${what} ${context.entry.llm_label}: ${describeError(err)}`);
      // Leaving a mode stops its motion before the port closes (halt sends nothing when the robot was already told to stop):
      // the session, stopped next, lets go of its link once this settled.
      const halted = context.motion ? (connector.halt?.() ?? Promise.resolve()).catch(log('halting')) : Promise.resolve();
      o.halting = halted;
      const closing = halted.then(() => connector.stop()).catch(log('stopping'));
      track?.(closing);
    },
  });
  return setup({
    types: { context: {} as ActionContext, events: {} as ActionEvent, input: {} as ActionActorInput },
    actors: {
      runCommand: fromPromise<void, { connector: ActionConnector; command: Command | undefined }>(({ input, signal }) =>
        input.connector.run(input.command?.value, signal, {
          ...(input.command?.prepared ? { prepared: input.command.prepared.result } : {}),
          ...(input.command ? jobOf(input.command) : {}),
        }),
      ),
      // The connector's connection, when it has one that reconnects (the mqtt connector): the one reconnect engine.
      session: streamSessionMachine,
      // Owns the connector: the cleanup runs when the action actor stops (XState runs no exit actions then), before its session's.
      owner: fromCallback<{ type: 'none' }, { onStart: () => void; onStop: () => void }>(({ input }) => {
        input.onStart();
        return () => input.onStop();
      }),
    },
    guards: {
      hasPending: ({ context }) => context.pending.length > 0,
      isMotion: ({ context }) => context.motion,
      isSync: ({ context }) => context.sync,
      // Single guards rather than and([...]): idle's eventless transitions are checked after every event.
      motionWaiting: ({ context }) => context.pending.length > 0 && context.motion,
      syncWaiting: ({ context }) => context.pending.length > 0 && context.sync,
      // A command of a runSync connector that is not motion: nothing gates or interrupts it, so it runs as it arrives.
      runsNow: ({ context }) => !context.motion && context.pending.length === 0 && context.sync,
      // A motion command arriving with nothing waiting goes to the governor in the step that takes it.
      motionArrives: ({ context }) => context.motion && context.pending.length === 0,
      noCurrent: ({ context }) => context.current === undefined,
      isCurrent: ({ context, event }) => event.type === 'action.cancel' && context.current === event.id,
      isAnswer: ({ context, event }) => (event.type === 'safety.granted' || event.type === 'safety.refused') && context.current === event.id,
    },
    actions: {
      accept: assign(({ context, event, self }) => {
        if (event.type !== 'action.command') return {};
        const o = own(self);
        const a = at(self, context);
        const accepted = validated(a, context, o, event.command);
        if (!accepted || !o.spec) return {};
        if (o.spec.queue === 'latest') reportPending(self, context, context.pending, 'replaced by a newer command', 0);
        o.commands.set(accepted.id, accepted);
        const pending = o.spec.queue === 'latest' ? [accepted.id] : [...context.pending, accepted.id];
        // The bound: past ACTION_QUEUE_LIMIT waiting, the oldest waiting commands make room (newest wins).
        const over = pending.length - ACTION_QUEUE_LIMIT;
        const overflowed = context.overflowed + Math.max(0, over);
        const after = { ...a, overflowed };
        for (const id of over > 0 ? pending.splice(0, over) : []) {
          const c = o.commands.get(id);
          if (c) report(after, c, 'dropped', `queue full (${ACTION_QUEUE_LIMIT} waiting): the oldest command made room for a newer one`, pending.length);
        }
        report(after, accepted, 'queued', undefined, pending.length);
        return { pending, overflowed };
      }),
      // A runSync command arriving with nothing waiting: queued, run and settled in this step, the context unchanged.
      runArrived: ({ context, event, self }) => {
        if (event.type !== 'action.command') return;
        const o = own(self);
        const a = at(self, context);
        const accepted = validated(a, context, o, event.command);
        if (!accepted) return;
        report(a, accepted, 'queued', undefined, 0);
        runNow(a, o.connector!, accepted);
      },
      takeNext: assign(({ context }) => ({ current: context.pending[0], pending: context.pending.slice(1) })),
      // A motion command with nothing waiting: queued (as one waiting, as if it had passed the queue) and taken at once.
      takeArrived: assign(({ context, event, self }) => {
        if (event.type !== 'action.command') return {};
        const o = own(self);
        const a = at(self, context);
        const accepted = validated(a, context, o, event.command);
        if (!accepted) return {};
        o.commands.set(accepted.id, accepted);
        report(a, accepted, 'queued', undefined, 1);
        return { current: accepted.id };
      }),
      // A runSync connector: the next waiting command runs to its end here (idle loops while commands wait).
      runNextNow: assign(({ context, self }) => {
        const [id, ...pending] = context.pending;
        const o = own(self);
        const command = id === undefined ? undefined : o.commands.get(id);
        if (command) runNow(at(self, { ...context, pending }), o.connector!, command);
        return { pending, current: undefined };
      }),
      // A granted motion command of a runSync connector runs to its end in the step of the grant.
      runCurrentNow: assign(({ context, self }) => {
        const o = own(self);
        const command = context.current === undefined ? undefined : o.commands.get(context.current);
        if (command) runNow(at(self, context), o.connector!, command);
        return { current: undefined };
      }),
      askGovernor: enqueueActions(({ context, self, enqueue }) => {
        const current = context.current === undefined ? undefined : own(self).commands.get(context.current);
        if (!current) return;
        const governor = governorOf(self);
        if (!governor) {
          enqueue.raise({ type: 'safety.refused', id: current.id, reason: NO_GOVERNOR });
          return;
        }
        enqueue.sendTo(governor, {
          type: 'safety.request',
          id: current.id,
          mode: inputOf<ActionActorInput>(self).deps.mode,
          label: context.entry.llm_label,
          value: current.value,
          origin: current.origin,
          replyTo: self,
        });
      }),
      reportRunning: ({ context, self }) => reportCurrent(self, context, 'running'),
      reportDone: ({ context, self }) => reportCurrent(self, context, 'done'),
      reportFailed: ({ context, event, self }) => reportCurrent(self, context, 'failed', describeError((event as { error?: unknown }).error)),
      reportRefused: ({ context, event, self }) =>
        reportCurrent(self, context, 'failed', `refused by the safety governor: ${(event as { reason?: string }).reason ?? ''}`),
      reportInterrupted: ({ context, self }) => reportCurrent(self, context, 'interrupted', 'interrupted'),
      reportHalted: ({ context, event, self }) =>
        reportCurrent(self, context, 'interrupted', `stopped by the safety governor: ${(event as { reason?: string }).reason ?? ''}`),
      clearCurrent: assign({ current: undefined }),
      dropAll: assign(({ context, self }) => {
        reportPending(self, context, context.pending, 'queue dropped by an interrupt', 0);
        return { pending: [] };
      }),
      dropHalted: assign(({ context, event, self }) => {
        reportPending(self, context, context.pending, `stopped by the safety governor: ${(event as { reason?: string }).reason ?? ''}`);
        return { pending: [] };
      }),
      // After the running command (if any) was aborted: a motion connector's stop command, sent once.
      haltConnector: ({ context, self }) => {
        if (!context.motion) return;
        own(self)
          .connector?.halt?.()
          .catch((err: unknown) => inputOf<ActionActorInput>(self).deps.logger.error(`halting ${context.entry.llm_label}: ${describeError(err)}`));
      },
      removeCancelled: assign(({ context, event, self }) => {
        if (event.type !== 'action.cancel') return {};
        reportPending(
          self,
          context,
          context.pending.filter((id) => id === event.id),
          'cancelled',
        );
        return { pending: context.pending.filter((id) => id !== event.id) };
      }),
    },
  }).createMachine({
    id: 'action',
    context: ({ input, self }) => {
      let connector: ActionConnector | undefined;
      let spec: ActionDescriptor | undefined;
      let broken: string | undefined;
      let motion = false;
      try {
        spec = input.deps.plugins.action(input.entry.name);
        motion = input.deps.plugins.connector(input.entry.name, input.entry.connector).motion;
        connector = createConnector(input.entry, input.deps, (values) => self.send({ type: 'action.context', values }));
      } catch (err) {
        broken = `action ${input.entry.llm_label} not started: ${describeError(err)}`;
        input.deps.logger.warn(broken);
        input.deps.bus.emit({ type: 'error', at: Date.now(), source: 'action', message: broken });
      }
      owns.set(self, { spec, connector, commands: new Map(), deps: input.deps, halting: undefined });
      return {
        entry: input.entry,
        broken,
        motion,
        sync: typeof connector?.runSync === 'function',
        pending: [],
        current: undefined,
        overflowed: 0,
      };
    },
    // Started in this order, so XState stops them in this order when the actor stops (it stops a machine's
    // children in the order they were started, and runs no exit actions then): first the owner, whose
    // cleanup halts a motion connector and keeps the halt in `halting`; then the connector's session, whose
    // link's close waits for that halt (releasedAfter), so the stop line is out before the port closes.
    // A device's session (the serial connector's port) is the child `device:<kind>`, its states on the bus as `stream` events named by the action's label.
    entry: enqueueActions(({ context, enqueue, self }) => {
      enqueue.spawnChild('owner', { id: 'connector', input: ownerInput(self, context) });
      const session = own(self).connector?.session as SessionInput | undefined;
      if (!session) return;
      const held = context.motion ? releasedAfter(session, () => own(self).halting) : session;
      if (session.prefix !== 'serial' && session.prefix !== 'dds') enqueue.spawnChild('session', { id: 'session', input: held });
      else enqueue.spawnChild('session', { id: `device:${session.prefix}`, input: withStatesOnBus(held, own(self).deps.bus, context.entry.llm_label) });
    }),
    initial: 'idle',
    on: {
      'action.command': { actions: 'accept' },
      'action.cancel': { actions: 'removeCancelled' },
      'action.context': {
        actions: [
          ({ context, event, self }) =>
            event.type === 'action.context' &&
            inputOf<ActionActorInput>(self).deps.bus.emit({
              type: 'context',
              at: Date.now(),
              source: `action.${context.entry.llm_label}`,
              values: event.values,
            }),
          sendParent(({ event }) => ({ type: 'context.update', values: event.type === 'action.context' ? event.values : {} })),
        ],
      },
    },
    states: {
      idle: {
        always: [
          { guard: 'motionWaiting', target: 'authorizing', actions: 'takeNext' },
          { guard: 'syncWaiting', actions: 'runNextNow' },
          { guard: 'hasPending', target: 'running', actions: 'takeNext' },
        ],
        on: {
          // One step for a runSync command: queued, running and done (or failed) as it arrives.
          'action.command': [
            { guard: 'runsNow', actions: 'runArrived' },
            { guard: 'motionArrives', target: 'authorizing', actions: 'takeArrived' },
            { actions: 'accept' },
          ],
          'action.interrupt': { actions: 'dropAll' },
          'safety.halt': { actions: ['dropHalted', 'haltConnector'] },
        },
      },
      authorizing: {
        tags: ['busy'],
        entry: 'askGovernor',
        // A command that arrived invalid (reported failed as it came) leaves nothing to authorize.
        always: { guard: 'noCurrent', target: 'idle' },
        on: {
          'safety.granted': [
            { guard: and(['isAnswer', 'isSync']), target: 'idle', actions: 'runCurrentNow' },
            { guard: 'isAnswer', target: 'running' },
          ],
          'safety.refused': { guard: 'isAnswer', target: 'idle', actions: ['reportRefused', 'clearCurrent'] },
          'safety.halt': { target: 'idle', actions: ['reportHalted', 'clearCurrent', 'dropHalted', 'haltConnector'] },
          'action.interrupt': { target: 'idle', actions: ['reportInterrupted', 'clearCurrent', 'dropAll'] },
          'action.cancel': [{ guard: 'isCurrent', target: 'idle', actions: ['reportInterrupted', 'clearCurrent'] }, { actions: 'removeCancelled' }],
        },
      },
      running: {
        tags: ['busy'],
        entry: 'reportRunning',
        invoke: {
          id: 'command',
          src: 'runCommand',
          input: ({ context, self }) => ({
            connector: own(self).connector!,
            command: context.current === undefined ? undefined : own(self).commands.get(context.current),
          }),
          // Transition actions run after exit actions in XState v5, so `current` is cleared here, after reporting.
          onDone: { target: 'idle', actions: ['reportDone', 'clearCurrent'] },
          onError: { target: 'idle', actions: ['reportFailed', 'clearCurrent'] },
        },
        on: {
          'action.interrupt': { target: 'idle', actions: ['reportInterrupted', 'clearCurrent', 'dropAll'] },
          'action.cancel': [{ guard: 'isCurrent', target: 'idle', actions: ['reportInterrupted', 'clearCurrent'] }, { actions: 'removeCancelled' }],
          // Leaving `running` aborts the command (the serial connector sends STOP on abort); haltConnector then sends nothing more.
          'safety.halt': { target: 'idle', actions: ['reportHalted', 'clearCurrent', 'dropHalted', 'haltConnector'] },
        },
      },
    },
  });
}

export type ActionActorRef = ActorRefFrom<ReturnType<typeof actionLogic>>;

let nextCommandId = 1;

/**
 * The ActionHandle of a running action actor: what the loop, hooks and voice inputs use. Commands
 * sent after the actor stopped are reported `dropped`. `stop` is given for actors this module made
 * as their own root (`createActionHandle`); actors of the tree are stopped by their mode.
 */
export function handleOf(ref: ActionActorRef, entry: ActionConfig, stop: () => Promise<void> = async () => {}): ActionHandle {
  const live = () => ref.getSnapshot().status === 'active';
  const dropped = (command: Command) => report({ deps: inputOf<ActionActorInput>(ref).deps, entry }, command, 'dropped', ACTION_STOPPED);
  const send = (command: Command): boolean => {
    if (!live()) {
      dropped(command);
      return false;
    }
    ref.send({ type: 'action.command', command });
    return true;
  };
  const busy$ = new Observable<boolean>((subscriber) => {
    const state = new BehaviorSubject(live() && ref.getSnapshot().hasTag('busy'));
    const inner = state.pipe(distinctUntilChanged()).subscribe(subscriber);
    const sub = ref.subscribe({
      next: (s) => state.next(s.hasTag('busy')),
      complete: () => (state.next(false), state.complete()),
      error: () => (state.next(false), state.complete()),
    });
    if (!live()) state.complete();
    return () => {
      sub.unsubscribe();
      inner.unsubscribe();
    };
  });
  return {
    entry,
    busy$,
    get queueLength() {
      return live() ? ref.getSnapshot().context.pending.length : 0;
    },
    dispatch(value, origin) {
      send({ id: nextCommandId++, value, origin });
    },
    run(value, signal, options) {
      return new Promise<void>((resolve, reject) => {
        if (signal.aborted) {
          reject(new ActionError('interrupted', `${entry.llm_label}: aborted before it started`));
          return;
        }
        const id = nextCommandId++;
        const onAbort = () => ref.send({ type: 'action.cancel', id });
        // A command can settle inside send (an invalid value, a runSync connector): then nothing is left to cancel.
        let settled = false;
        const sent = send({
          id,
          value,
          origin: options?.origin ?? 'hook',
          ...(options?.mark ? { mark: options.mark } : {}),
          settle: (err) => {
            settled = true;
            signal.removeEventListener('abort', onAbort);
            if (err) reject(err);
            else resolve();
          },
        });
        if (sent && !settled) signal.addEventListener('abort', onAbort, { once: true });
      });
    },
    interrupt() {
      if (live()) ref.send({ type: 'action.interrupt' });
    },
    stop,
  };
}

/** An action actor as its own root, with its handle (tests and tools; the agent runs actions inside a mode actor). A motion action needs `safety`, a running governor, or refuses every command. */
export function createActionHandle(entry: ActionConfig, deps: ActionHandleDeps, options: { safety?: AnyActorRef } = {}): ActionHandle {
  const actor = createActor(actionLogic(), { input: { entry, deps, ...(options.safety ? { safety: options.safety } : {}) } });
  actor.start();
  return handleOf(actor, entry, async () => {
    actor.stop();
  });
}
