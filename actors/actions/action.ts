// One action of a mode as an XState actor (`action:<llm_label>`): validates commands, applies its queue policy, runs them through its connector.
import { BehaviorSubject, Observable, distinctUntilChanged } from 'rxjs';
import { and, assign, createActor, enqueueActions, fromCallback, fromPromise, sendParent, setup, type ActorRefFrom, type AnyActorRef } from 'xstate';
import { streamSessionMachine, type SessionInput } from '../streams/session-machine.js';
import type { z } from 'zod';
import type { ActionConfig } from '../../src/config/schema.js';
import type { ActionConnector, CommandJob, CommandMark } from '../../src/cortex/action.js';
import type { ActionDescriptor } from '../../src/plugins/types.js';
import type { ActionHandle, ActionHandleDeps } from '../../src/cortex/contracts.js';
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

interface ActionContext {
  entry: ActionConfig;
  /** The action's descriptor, or undefined when it could not be found (then `broken` says why). */
  spec: ActionDescriptor | undefined;
  deps: ActionHandleDeps;
  track?: (closing: Promise<unknown>) => void;
  /** The connector, or why it could not be made (every command then fails with that reason). */
  connector: ActionConnector | undefined;
  broken: string | undefined;
  /** The connector moves the robot: every command first asks the safety governor, and halts go to it. */
  motion: boolean;
  safety: AnyActorRef | undefined;
  pending: Command[];
  current: Command | undefined;
  /** Commands dropped so far because the queue was full (ACTION_QUEUE_LIMIT). */
  overflowed: number;
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
  });
  if (spec.motion && typeof made.halt !== 'function') throw new Error(`connector ${entry.connector} of ${entry.name} moves the robot but has no halt()`);
  return made;
}

/** The governor this action asks: the one given, else the agent tree's (`safety`), when it runs. */
function governorOf(context: Pick<ActionContext, 'safety'>, self: AnyActorRef): AnyActorRef | undefined {
  const ref = context.safety ?? (self.system.get(SAFETY_ID) as AnyActorRef | undefined);
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
function report(
  ctx: Pick<ActionContext, 'entry' | 'deps'> & { pending?: Command[]; overflowed?: number },
  command: Command,
  state: ActionState,
  error?: string,
  queue?: number,
): void {
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
  if (state !== 'queued' && state !== 'running') command.prepared?.abort.abort(new ActionError('interrupted', `${entry.llm_label}: ${state}`));
  if (state === 'done') command.settle?.();
  else if (state === 'failed' || state === 'dropped' || state === 'interrupted') {
    command.settle?.(new ActionError(state, `${entry.llm_label}: ${error ?? state}`));
  }
}

/**
 * The command as the connector will get it (its value parsed by the action's arguments, its `prepare`
 * started), or undefined when it failed here (reported `failed` and settled).
 */
function validated(context: ActionContext, command: Command): Command | undefined {
  if (context.broken !== undefined || !context.spec) return report(context, command, 'failed', context.broken ?? 'no such action'), undefined;
  const parsed = context.spec.args.safeParse(coerceValue(context.spec.args, command.value));
  if (!parsed.success) return report(context, command, 'failed', `invalid value for ${context.entry.llm_label}: ${issuesText(parsed.error)}`), undefined;
  const accepted: Command = { ...command, value: parsed.data };
  const connector = context.connector;
  if (connector?.prepare) {
    // Streamed speech: synthesis starts when a sentence is queued, not when its turn comes.
    const abort = new AbortController();
    try {
      accepted.prepared = { result: connector.prepare(parsed.data, abort.signal, jobOf(accepted)), abort };
    } catch (err) {
      return report(context, command, 'failed', describeError(err)), undefined;
    }
  }
  return accepted;
}

/**
 * Runs one command of a connector that ends its commands before returning (`runSync`): reports it
 * `running`, then `done` or `failed`, and settles its caller, all in the step that took it.
 */
function runNow(ctx: Pick<ActionContext, 'entry' | 'deps' | 'connector' | 'pending' | 'overflowed'>, command: Command): void {
  report(ctx, command, 'running');
  try {
    const job = jobOf(command);
    if (command.prepared) job.prepared = command.prepared.result;
    ctx.connector!.runSync!(command.value, job);
  } catch (err) {
    report(ctx, command, 'failed', describeError(err));
    return;
  }
  report(ctx, command, 'done');
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
 */
export const actionMachine = setup({
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
    // Owns the connector: the cleanup runs when the action actor stops (XState runs no exit actions then).
    owner: fromCallback<{ type: 'none' }, { onStart: () => void; onStop: () => void }>(({ input }) => {
      input.onStart();
      return () => input.onStop();
    }),
  },
  guards: {
    hasPending: ({ context }) => context.pending.length > 0,
    isMotion: ({ context }) => context.motion,
    isSync: ({ context }) => typeof context.connector?.runSync === 'function',
    // Single guards rather than and([...]): idle's eventless transitions are checked after every event.
    motionWaiting: ({ context }) => context.pending.length > 0 && context.motion,
    syncWaiting: ({ context }) => context.pending.length > 0 && typeof context.connector?.runSync === 'function',
    // A command of a runSync connector that is not motion: nothing gates or interrupts it, so it runs as it arrives.
    runsNow: ({ context }) => !context.motion && context.pending.length === 0 && typeof context.connector?.runSync === 'function',
    isCurrent: ({ context, event }) => event.type === 'action.cancel' && context.current?.id === event.id,
    isAnswer: ({ context, event }) => (event.type === 'safety.granted' || event.type === 'safety.refused') && context.current?.id === event.id,
  },
  actions: {
    accept: assign(({ context, event }) => {
      if (event.type !== 'action.command') return {};
      const accepted = validated(context, event.command);
      if (!accepted || !context.spec) return {};
      if (context.spec.queue === 'latest') for (const c of context.pending) report(context, c, 'dropped', 'replaced by a newer command', 0);
      const pending = context.spec.queue === 'latest' ? [accepted] : [...context.pending, accepted];
      // The bound: past ACTION_QUEUE_LIMIT waiting, the oldest waiting commands make room (newest wins).
      const over = pending.length - ACTION_QUEUE_LIMIT;
      const overflowed = context.overflowed + Math.max(0, over);
      for (const c of over > 0 ? pending.splice(0, over) : []) {
        report(
          { ...context, overflowed },
          c,
          'dropped',
          `queue full (${ACTION_QUEUE_LIMIT} waiting): the oldest command made room for a newer one`,
          pending.length,
        );
      }
      report({ ...context, overflowed }, accepted, 'queued', undefined, pending.length);
      return { pending, overflowed };
    }),
    // A runSync command arriving with nothing waiting: queued, run and settled in this step, the context unchanged.
    runArrived: ({ context, event }) => {
      if (event.type !== 'action.command') return;
      const accepted = validated(context, event.command);
      if (!accepted) return;
      report(context, accepted, 'queued', undefined, 0);
      runNow(context, accepted);
    },
    takeNext: assign(({ context }) => ({ current: context.pending[0], pending: context.pending.slice(1) })),
    // A runSync connector: the next waiting command runs to its end here (idle loops while commands wait).
    runNextNow: assign(({ context }) => {
      const [command, ...pending] = context.pending;
      if (command) runNow({ ...context, pending }, command);
      return { pending, current: undefined };
    }),
    // A granted motion command of a runSync connector runs to its end in the step of the grant.
    runCurrentNow: assign(({ context }) => {
      if (context.current) runNow(context, context.current);
      return { current: undefined };
    }),
    askGovernor: enqueueActions(({ context, self, enqueue }) => {
      const current = context.current;
      if (!current) return;
      const governor = governorOf(context, self);
      if (!governor) {
        enqueue.raise({ type: 'safety.refused', id: current.id, reason: NO_GOVERNOR });
        return;
      }
      enqueue.sendTo(governor, {
        type: 'safety.request',
        id: current.id,
        mode: context.deps.mode,
        label: context.entry.llm_label,
        value: current.value,
        origin: current.origin,
        replyTo: self,
      });
    }),
    reportRunning: ({ context }) => context.current && report(context, context.current, 'running'),
    reportDone: ({ context }) => context.current && report(context, context.current, 'done'),
    reportFailed: ({ context, event }) => context.current && report(context, context.current, 'failed', describeError((event as { error?: unknown }).error)),
    reportRefused: ({ context, event }) =>
      context.current && report(context, context.current, 'failed', `refused by the safety governor: ${(event as { reason?: string }).reason ?? ''}`),
    reportInterrupted: ({ context }) => context.current && report(context, context.current, 'interrupted', 'interrupted'),
    reportHalted: ({ context, event }) =>
      context.current && report(context, context.current, 'interrupted', `stopped by the safety governor: ${(event as { reason?: string }).reason ?? ''}`),
    clearCurrent: assign({ current: undefined }),
    dropAll: assign(({ context }) => {
      for (const c of context.pending) report(context, c, 'dropped', 'queue dropped by an interrupt', 0);
      return { pending: [] };
    }),
    dropHalted: assign(({ context, event }) => {
      for (const c of context.pending) report(context, c, 'dropped', `stopped by the safety governor: ${(event as { reason?: string }).reason ?? ''}`);
      return { pending: [] };
    }),
    // After the running command (if any) was aborted: a motion connector's stop command, sent once.
    haltConnector: ({ context }) => {
      if (!context.motion) return;
      context.connector?.halt?.().catch((err: unknown) => context.deps.logger.error(`halting ${context.entry.llm_label}: ${describeError(err)}`));
    },
    removeCancelled: assign(({ context, event }) => {
      if (event.type !== 'action.cancel') return {};
      for (const c of context.pending.filter((c) => c.id === event.id)) report(context, c, 'dropped', 'cancelled');
      return { pending: context.pending.filter((c) => c.id !== event.id) };
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
    return { ...input, spec, connector, broken, motion, safety: input.safety, pending: [], current: undefined, overflowed: 0 };
  },
  invoke: {
    id: 'connector',
    src: 'owner',
    input: ({ context, self }) => ({
      // A motion action tells the governor it exists, so a halt (e-stop, dead-man, stopping) reaches it.
      onStart: () => {
        if (context.motion) governorOf(context, self)?.send({ type: 'safety.register', key: self.sessionId, ref: self });
      },
      onStop: () => {
        const last = self.getSnapshot().context;
        if (last.current) report(last, last.current, 'interrupted', ACTION_STOPPED);
        for (const c of last.pending) report(last, c, 'dropped', ACTION_STOPPED);
        if (context.motion) governorOf(context, self)?.send({ type: 'safety.unregister', key: self.sessionId });
        const connector = context.connector;
        if (!connector) return;
        const log = (what: string) => (err: unknown) => context.deps.logger.warn(`${what} ${context.entry.llm_label}: ${describeError(err)}`);
        // Leaving a mode stops its motion before the port closes (halt sends nothing when the robot was already told to stop).
        const halted = context.motion ? (connector.halt?.() ?? Promise.resolve()).catch(log('halting')) : Promise.resolve();
        const closing = halted.then(() => connector.stop()).catch(log('stopping'));
        context.track?.(closing);
      },
    }),
  },
  // Spawned before the owner is invoked, so it stops first: its link's close leaves the client to the connector, whose stop halts first.
  entry: enqueueActions(({ context, enqueue }) => {
    const session = context.connector?.session;
    if (session) enqueue.spawnChild('session', { id: 'session', input: session as SessionInput });
  }),
  initial: 'idle',
  on: {
    'action.command': { actions: 'accept' },
    'action.cancel': { actions: 'removeCancelled' },
    'action.context': {
      actions: [
        ({ context, event }) =>
          event.type === 'action.context' &&
          context.deps.bus.emit({ type: 'context', at: Date.now(), source: `action.${context.entry.llm_label}`, values: event.values }),
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
        'action.command': [{ guard: 'runsNow', actions: 'runArrived' }, { actions: 'accept' }],
        'action.interrupt': { actions: 'dropAll' },
        'safety.halt': { actions: ['dropHalted', 'haltConnector'] },
      },
    },
    authorizing: {
      tags: ['busy'],
      entry: 'askGovernor',
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
        input: ({ context }) => ({ connector: context.connector!, command: context.current }),
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

export type ActionActorRef = ActorRefFrom<typeof actionMachine>;

let nextCommandId = 1;

/**
 * The ActionHandle of a running action actor: what the loop, hooks and voice inputs use. Commands
 * sent after the actor stopped are reported `dropped`. `stop` is given for actors this module made
 * as their own root (`createActionHandle`); actors of the tree are stopped by their mode.
 */
export function handleOf(ref: ActionActorRef, entry: ActionConfig, stop: () => Promise<void> = async () => {}): ActionHandle {
  const live = () => ref.getSnapshot().status === 'active';
  const dropped = (command: Command) => report(ref.getSnapshot().context, command, 'dropped', ACTION_STOPPED);
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
  const actor = createActor(actionMachine, { input: { entry, deps, ...(options.safety ? { safety: options.safety } : {}) } });
  actor.start();
  return handleOf(actor, entry, async () => {
    actor.stop();
  });
}
