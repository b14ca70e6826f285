// One action of a mode as an XState actor (`action:<llm_label>`): validates commands, applies its queue policy, runs them through its connector.
import { BehaviorSubject, Observable, distinctUntilChanged } from 'rxjs';
import { and, assign, createActor, enqueueActions, fromCallback, fromPromise, sendParent, setup, type ActorRefFrom, type AnyActorRef } from 'xstate';
import { streamSessionLogic, type SessionInput } from '../streams/session-machine.js';
import { withStatesOnBus } from '../streams/device-session.js';
import type { ActionConfig } from '../../src/config/schema.js';
import type { ActionConnector } from '../../src/cortex/action.js';
import type { ActionDescriptor } from '../../src/plugins/types.js';
import type { ActionHandle, ActionHandleDeps } from '../../src/cortex/contracts.js';
import type { SafetyRequest } from '../safety/governor.js';
import type { ActionState } from '../../src/cortex/events.js';
import { describeError } from '../../src/errors.js';
import {
  ACTION_STOPPED,
  ActionError,
  type At,
  type Command,
  enqueue,
  jobOf,
  type ReportDeps,
  report,
  reportDropped,
  runNow,
  validated,
} from './command-queue.js';
import { makeConnector, releasedAfter, stopConnector } from './connector-wiring.js';

export { ACTION_QUEUE_LIMIT, ACTION_STOPPED, ActionError, type Command, coerceValue } from './command-queue.js';
export { HALT_RELEASE_MS, createConnector } from './connector-wiring.js';

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
 * The action actor's data. Its services (deps, track, safety: its input), its connector and the
 * commands it holds (their callers' callbacks, a prepared head start) are kept by its logic per actor
 * (`Own`); the context names commands by id.
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
  /** The actor's input's services. */
  deps: ActionHandleDeps;
  track: ((closing: Promise<unknown>) => void) | undefined;
  /** The governor given in the input (an action that is its own root). */
  safety: AnyActorRef | undefined;
  /**
   * The halt the actor's stop sent (a motion connector's stop line, written), set by the owner's
   * cleanup: the connector's session lets go of its link (a serial port closes) only once it settled.
   */
  halting: Promise<void> | undefined;
  /** The governor given in the input (an action that is its own root) stopped: as if none ran. */
  governorEnded: boolean;
  /** Ends the watch of the given governor (when there is one). */
  unwatchGovernor: () => void;
}

/** Each action actor's own connector and commands, by actor (made when it starts, dropped with it): one map per logic. */
type Owns = WeakMap<AnyActorRef, Own>;

/** What actor `self` owns. */
const own = (owns: Owns, self: AnyActorRef): Own => owns.get(self)!;

/** The report target of actor `self` with context `c`. */
function at(
  owns: Owns,
  self: AnyActorRef,
  c: Pick<ActionContext, 'entry' | 'pending' | 'overflowed'>,
): At & { pending: readonly number[]; commands: Map<number, Command> } {
  const o = own(owns, self);
  return { deps: o.deps, entry: c.entry, pending: c.pending, overflowed: c.overflowed, commands: o.commands };
}

/** Reports the current command, if any. */
function reportCurrent(owns: Owns, self: AnyActorRef, c: ActionContext, state: ActionState, error?: string): void {
  const command = c.current === undefined ? undefined : own(owns, self).commands.get(c.current);
  if (command) report(at(owns, self, c), command, state, error);
}

/** Reports every waiting command `ids` dropped and settles its caller. */
function reportPending(owns: Owns, self: AnyActorRef, c: ActionContext, ids: readonly number[], error: string, queue?: number): void {
  reportDropped(at(owns, self, c), ids, error, queue);
}

/**
 * The governor this action asks, when it runs: the one given (watched by subscription since the action
 * started), else the agent tree's (`safety`), which XState's system forgets once it stopped.
 */
function governorOf(owns: Owns, self: AnyActorRef): AnyActorRef | undefined {
  const o = owns.get(self);
  if (o?.safety) return o.governorEnded ? undefined : o.safety;
  return self.system.get(SAFETY_ID) as AnyActorRef | undefined;
}

/** The reason a governor's refusal or halt gives ('' for any other event). */
const reasonOf = (event: ActionEvent): string => ('reason' in event ? event.reason : '');

/** The owner's start and stop: the action's registration with the governor, and its stop path (report, halt, stop the connector). */
function ownerInput(owns: Owns, self: AnyActorRef, context: ActionContext): { onStart: () => void; onStop: () => void } {
  return {
    // A motion action tells the governor it exists, so a halt (e-stop, dead-man, stopping) reaches it.
    onStart: () => {
      if (context.motion) governorOf(owns, self)?.send({ type: 'safety.register', key: self.sessionId, ref: self });
    },
    onStop: () => {
      const last = self.getSnapshot().context;
      reportCurrent(owns, self, last, 'interrupted', ACTION_STOPPED);
      reportPending(owns, self, last, last.pending, ACTION_STOPPED);
      if (context.motion) governorOf(owns, self)?.send({ type: 'safety.unregister', key: self.sessionId });
      const o = own(owns, self);
      o.unwatchGovernor();
      if (!o.connector) return;
      const { deps, track } = o;
      // The session, stopped next, lets go of its link once the halt settled.
      const { halting, closing } = stopConnector(o.connector, context.motion, context.entry.llm_label, deps);
      o.halting = halting;
      track?.(closing);
    },
  };
}

/** The context of a new action actor; makes its connector and keeps what it owns (`Own`). */
function actionContext(owns: Owns, { input, self }: { input: ActionActorInput; self: AnyActorRef }): ActionContext {
  const made = makeConnector(input.entry, input.deps, (values) => self.send({ type: 'action.context', values }));
  const o: Own = {
    spec: made.spec,
    connector: made.connector,
    commands: new Map(),
    deps: input.deps,
    track: input.track,
    safety: input.safety,
    halting: undefined,
    governorEnded: false,
    unwatchGovernor: () => undefined,
  };
  if (input.safety) {
    const ended = () => void (o.governorEnded = true);
    const sub = input.safety.subscribe({ complete: ended, error: ended });
    o.unwatchGovernor = () => sub.unsubscribe();
  }
  owns.set(self, o);
  return {
    entry: input.entry,
    broken: made.broken,
    motion: made.motion,
    sync: typeof made.connector?.runSync === 'function',
    pending: [],
    current: undefined,
    overflowed: 0,
  };
}

/**
 * The connector's session child, if it has one: its id and input. A motion connector's link waits for
 * the stop's halt before it closes (releasedAfter); a device's session (the serial connector's port) is
 * the child `device:<kind>`, its states on the bus as `stream` events named by the action's label.
 */
function sessionChild(owns: Owns, self: AnyActorRef, context: ActionContext): { id: string; input: SessionInput } | undefined {
  const session = own(owns, self).connector?.session as SessionInput | undefined;
  if (!session) return undefined;
  const held = context.motion ? releasedAfter(session, () => own(owns, self).halting) : session;
  if (session.prefix !== 'serial' && session.prefix !== 'dds') return { id: 'session', input: held };
  return { id: `device:${session.prefix}`, input: withStatesOnBus(held, own(owns, self).deps.bus, context.entry.llm_label) };
}

/** What an action of the machine is given. */
interface Args {
  context: ActionContext;
  event: ActionEvent;
  self: AnyActorRef;
}

/** Validates an arriving command and puts it in the queue by the action's policy (ACTION_QUEUE_LIMIT bounds it). */
function acceptCommand(owns: Owns, { context, event, self }: Args): Partial<ActionContext> {
  if (event.type !== 'action.command') return {};
  const o = own(owns, self);
  const a = at(owns, self, context);
  const accepted = validated(a, { ...o, broken: context.broken }, event.command);
  if (!accepted || !o.spec) return {};
  return enqueue(a, o.spec.queue, context.overflowed, accepted);
}

/** A runSync command arriving with nothing waiting: queued, run and settled in this step, the context unchanged. */
function runArrived(owns: Owns, { context, event, self }: Args): void {
  if (event.type !== 'action.command') return;
  const o = own(owns, self);
  const a = at(owns, self, context);
  const accepted = validated(a, { ...o, broken: context.broken }, event.command);
  if (!accepted) return;
  report(a, accepted, 'queued', undefined, 0);
  runNow(a, o.connector!, accepted);
}

/** A motion command with nothing waiting: queued (as one waiting, as if it had passed the queue) and taken at once. */
function takeArrived(owns: Owns, { context, event, self }: Args): Partial<ActionContext> {
  if (event.type !== 'action.command') return {};
  const o = own(owns, self);
  const a = at(owns, self, context);
  const accepted = validated(a, { ...o, broken: context.broken }, event.command);
  if (!accepted) return {};
  o.commands.set(accepted.id, accepted);
  report(a, accepted, 'queued', undefined, 1);
  return { current: accepted.id };
}

/** A runSync connector: the next waiting command runs to its end here (idle loops while commands wait). */
function runNextNow(owns: Owns, { context, self }: Args): Partial<ActionContext> {
  const [id, ...pending] = context.pending;
  const o = own(owns, self);
  const command = id === undefined ? undefined : o.commands.get(id);
  if (command) runNow(at(owns, self, { ...context, pending }), o.connector!, command);
  return { pending, current: undefined };
}

/** A granted motion command of a runSync connector runs to its end in the step of the grant. */
function runCurrentNow(owns: Owns, { context, self }: Args): Partial<ActionContext> {
  const o = own(owns, self);
  const command = context.current === undefined ? undefined : o.commands.get(context.current);
  if (command) runNow(at(owns, self, context), o.connector!, command);
  return { current: undefined };
}

/** Drops the cancelled command if it waits (reported `dropped`: cancelled). */
function removeCancelled(owns: Owns, { context, event, self }: Args): Partial<ActionContext> {
  if (event.type !== 'action.cancel') return {};
  reportPending(
    owns,
    self,
    context,
    context.pending.filter((id) => id === event.id),
    'cancelled',
  );
  return { pending: context.pending.filter((id) => id !== event.id) };
}

/** After the running command (if any) was aborted: a motion connector's stop command, sent once. */
function haltConnector(owns: Owns, { context, self }: Args): void {
  if (!context.motion) return;
  own(owns, self)
    .connector?.halt?.()
    .catch((err: unknown) => own(owns, self).deps.logger.error(`halting ${context.entry.llm_label}: ${describeError(err)}`));
}

/** The request for the current command to the governor, or the refusal when none runs (undefined when no command is current). */
function governorRequest(owns: Owns, { context, self }: Args): { governor: AnyActorRef; request: SafetyRequest } | { refused: SafetyReply } | undefined {
  const current = context.current === undefined ? undefined : own(owns, self).commands.get(context.current);
  if (!current) return undefined;
  const governor = governorOf(owns, self);
  if (!governor) return { refused: { type: 'safety.refused', id: current.id, reason: NO_GOVERNOR } };
  const mode = own(owns, self).deps.mode;
  return {
    governor,
    request: { type: 'safety.request', id: current.id, mode, label: context.entry.llm_label, value: current.value, origin: current.origin, replyTo: self },
  };
}

/** Context values a connector published: on the bus as a `context` event from `action.<label>`. */
function publishContext(owns: Owns, { context, event, self }: Args): void {
  if (event.type !== 'action.context') return;
  own(owns, self).deps.bus.emit({ type: 'context', at: Date.now(), source: `action.${context.entry.llm_label}`, values: event.values });
}

/** The children the action machine can start: the running command, the connector's session and the owner of the connector. */
const actionActors = {
  runCommand: fromPromise<void, { connector: ActionConnector; command: Command | undefined }>(({ input, signal }) =>
    input.connector.run(input.command?.value, signal, {
      ...(input.command?.prepared ? { prepared: input.command.prepared.result } : {}),
      ...(input.command ? jobOf(input.command) : {}),
    }),
  ),
  // Owns the connector: the cleanup runs when the action actor stops (XState runs no exit actions then), before its session's.
  owner: fromCallback<{ type: 'none' }, { onStart: () => void; onStop: () => void }>(({ input }) => {
    input.onStart();
    return () => input.onStop();
  }),
};

/** The action machine's guards (all read its context; the last three the event too). */
const actionGuards = {
  hasPending: ({ context }: { context: ActionContext }) => context.pending.length > 0,
  isMotion: ({ context }: { context: ActionContext }) => context.motion,
  isSync: ({ context }: { context: ActionContext }) => context.sync,
  // Single guards rather than and([...]): idle's eventless transitions are checked after every event.
  motionWaiting: ({ context }: { context: ActionContext }) => context.pending.length > 0 && context.motion,
  syncWaiting: ({ context }: { context: ActionContext }) => context.pending.length > 0 && context.sync,
  // A command of a runSync connector that is not motion: nothing gates or interrupts it, so it runs as it arrives.
  runsNow: ({ context }: { context: ActionContext }) => !context.motion && context.pending.length === 0 && context.sync,
  // A motion command arriving with nothing waiting goes to the governor in the step that takes it.
  motionArrives: ({ context }: { context: ActionContext }) => context.motion && context.pending.length === 0,
  noCurrent: ({ context }: { context: ActionContext }) => context.current === undefined,
  isCurrent: ({ context, event }: { context: ActionContext; event: ActionEvent }) => event.type === 'action.cancel' && context.current === event.id,
  isAnswer: ({ context, event }: { context: ActionContext; event: ActionEvent }) =>
    (event.type === 'safety.granted' || event.type === 'safety.refused') && context.current === event.id,
};

/** The action machine's types, children, guards and named actions (the statechart is actionLogic's). */
function actionSetup(owns: Owns) {
  return setup({
    types: { context: {} as ActionContext, events: {} as ActionEvent, input: {} as ActionActorInput },
    // The connector's connection, when it has one that reconnects (the mqtt connector): the session machine.
    actors: { ...actionActors, session: streamSessionLogic() },
    guards: actionGuards,
    actions: {
      accept: assign((a) => acceptCommand(owns, a)),
      runArrived: (a) => runArrived(owns, a),
      takeNext: assign(({ context }) => ({ current: context.pending[0], pending: context.pending.slice(1) })),
      takeArrived: assign((a) => takeArrived(owns, a)),
      runNextNow: assign((a) => runNextNow(owns, a)),
      runCurrentNow: assign((a) => runCurrentNow(owns, a)),
      askGovernor: enqueueActions(({ context, event, self, enqueue }) => {
        const asked = governorRequest(owns, { context, event, self });
        if (!asked) return;
        if ('refused' in asked) enqueue.raise(asked.refused);
        else enqueue.sendTo(asked.governor, asked.request);
      }),
      reportRunning: ({ context, self }) => reportCurrent(owns, self, context, 'running'),
      reportDone: ({ context, self }) => reportCurrent(owns, self, context, 'done'),
      reportFailed: ({ context, event, self }) => reportCurrent(owns, self, context, 'failed', describeError('error' in event ? event.error : undefined)),
      reportRefused: ({ context, event, self }) => reportCurrent(owns, self, context, 'failed', `refused by the safety governor: ${reasonOf(event)}`),
      reportInterrupted: ({ context, self }) => reportCurrent(owns, self, context, 'interrupted', 'interrupted'),
      reportHalted: ({ context, event, self }) => reportCurrent(owns, self, context, 'interrupted', `stopped by the safety governor: ${reasonOf(event)}`),
      clearCurrent: assign({ current: undefined }),
      dropAll: assign(({ context, self }) => {
        reportPending(owns, self, context, context.pending, 'queue dropped by an interrupt', 0);
        return { pending: [] };
      }),
      dropHalted: assign(({ context, event, self }) => {
        reportPending(owns, self, context, context.pending, `stopped by the safety governor: ${reasonOf(event)}`);
        return { pending: [] };
      }),
      haltConnector: (a) => haltConnector(owns, a),
      removeCancelled: assign((a) => removeCancelled(owns, a)),
      publishContext: (a) => publishContext(owns, a),
    },
  });
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
 * The context is data: the services come through the input, and the logic keeps each of its
 * actors' connector and commands by actor (the queue: command-queue.ts; the connector: connector-wiring.ts).
 */
export function actionLogic() {
  const owns: Owns = new WeakMap();
  return actionSetup(owns).createMachine({
    id: 'action',
    context: (a) => actionContext(owns, a),
    // XState stops children in start order (and runs no exit actions then): the owner's cleanup halts a motion connector first,
    // then the session's link closes once that halt settled (releasedAfter), so the stop line is out before the port closes.
    entry: enqueueActions(({ context, enqueue, self }) => {
      enqueue.spawnChild('owner', { id: 'connector', input: ownerInput(owns, self, context) });
      const child = sessionChild(owns, self, context);
      if (child) enqueue.spawnChild('session', child);
    }),
    initial: 'idle',
    on: {
      'action.command': { actions: 'accept' },
      'action.cancel': { actions: 'removeCancelled' },
      'action.context': {
        actions: ['publishContext', sendParent(({ event }) => ({ type: 'context.update', values: event.type === 'action.context' ? event.values : {} }))],
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
            connector: own(owns, self).connector!,
            command: context.current === undefined ? undefined : own(owns, self).commands.get(context.current),
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
export function handleOf(ref: ActionActorRef, entry: ActionConfig, deps: ReportDeps, stop: () => Promise<void> = async () => {}): ActionHandle {
  const live = () => ref.getSnapshot().status === 'active';
  const dropped = (command: Command) => report({ deps, entry }, command, 'dropped', ACTION_STOPPED);
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
  return handleOf(actor, entry, deps, async () => {
    actor.stop();
  });
}
