// One action of a mode as an XState actor: validates commands, applies the action's queue policy, runs them through its connector.
import { BehaviorSubject, distinctUntilChanged, type Observable } from 'rxjs';
import { assign, createActor, fromPromise, setup } from 'xstate';
import type { z } from 'zod';
import { CortexError, describeError } from '../../src/errors.js';
import type { ActionConfig } from '../../src/config/schema.js';
import type { ActionConnector } from '../../src/cortex/action.js';
import type { ActionHandle, ActionHandleDeps } from '../../src/cortex/contracts.js';
import type { ActionState } from '../../src/cortex/events.js';
import type { ActionDescriptor } from '../../src/plugins/index.js';

/** A command that did not complete: invalid value, connector failure, dropped from the queue or interrupted. */
export class ActionError extends CortexError {
  readonly state: Exclude<ActionState, 'queued' | 'running' | 'done'>;
  constructor(state: ActionError['state'], message: string, options?: { cause?: unknown }) {
    super(`action_${state}`, message, options);
    this.name = 'ActionError';
    this.state = state;
  }
}

interface Command {
  id: number;
  value: unknown;
  origin: 'model' | 'hook';
  /** Called once when the command leaves the actor (run() waits on it). */
  settle?: (err?: ActionError) => void;
}

type ActionEvent = { type: 'action.command'; command: Command } | { type: 'action.interrupt' } | { type: 'action.cancel'; id: number };

interface MachineDeps {
  policy: ActionDescriptor['queue'];
  run: (value: unknown, signal: AbortSignal) => Promise<void>;
  report: (command: Command, state: ActionState, error?: string) => void;
}

/**
 * The action statechart: `idle` until a command is pending, then `running` invokes the connector with an
 * AbortSignal that XState aborts when `running` is left (interrupt, cancel, stop). With policy `latest`
 * a new command replaces the pending one (reported `dropped`); with `queue` it waits its turn.
 */
export function actionMachine(deps: MachineDeps) {
  return setup({
    types: { context: {} as { pending: Command[]; current: Command | undefined }, events: {} as ActionEvent },
    actors: {
      runCommand: fromPromise<void, { value: unknown }>(({ input, signal }) => deps.run(input.value, signal)),
    },
    guards: {
      hasPending: ({ context }) => context.pending.length > 0,
      isCurrent: ({ context, event }) => event.type === 'action.cancel' && context.current?.id === event.id,
    },
    actions: {
      dropReplaced: ({ context }) => {
        if (deps.policy !== 'latest') return;
        for (const c of context.pending) deps.report(c, 'dropped', 'replaced by a newer command');
      },
      enqueue: assign({
        pending: ({ context, event }) => {
          if (event.type !== 'action.command') return context.pending;
          return deps.policy === 'latest' ? [event.command] : [...context.pending, event.command];
        },
      }),
      reportQueued: ({ event }) => {
        if (event.type === 'action.command') deps.report(event.command, 'queued');
      },
      takeNext: assign(({ context }) => ({ current: context.pending[0], pending: context.pending.slice(1) })),
      reportRunning: ({ context }) => context.current && deps.report(context.current, 'running'),
      reportDone: ({ context }) => context.current && deps.report(context.current, 'done'),
      reportFailed: ({ context, event }) =>
        context.current && deps.report(context.current, 'failed', describeError((event as { error?: unknown }).error)),
      reportInterrupted: ({ context }) => context.current && deps.report(context.current, 'interrupted', 'interrupted'),
      clearCurrent: assign({ current: undefined }),
      dropAll: assign(({ context }) => {
        for (const c of context.pending) deps.report(c, 'dropped', 'queue dropped by an interrupt');
        return { pending: [] };
      }),
      removeCancelled: assign(({ context, event }) => {
        if (event.type !== 'action.cancel') return {};
        const cancelled = context.pending.filter((c) => c.id === event.id);
        for (const c of cancelled) deps.report(c, 'dropped', 'cancelled');
        return { pending: context.pending.filter((c) => c.id !== event.id) };
      }),
    },
  }).createMachine({
    id: 'action',
    initial: 'idle',
    context: { pending: [], current: undefined },
    on: {
      'action.command': { actions: ['dropReplaced', 'enqueue', 'reportQueued'] },
      'action.cancel': { actions: 'removeCancelled' },
    },
    states: {
      idle: {
        always: { guard: 'hasPending', target: 'running' },
        on: { 'action.interrupt': { actions: 'dropAll' } },
      },
      running: {
        entry: ['takeNext', 'reportRunning'],
        invoke: {
          src: 'runCommand',
          input: ({ context }) => ({ value: context.current?.value }),
          // Transition actions run after exit actions in XState v5, so `current` is cleared here, after reporting.
          onDone: { target: 'idle', actions: ['reportDone', 'clearCurrent'] },
          onError: { target: 'idle', actions: ['reportFailed', 'clearCurrent'] },
        },
        on: {
          'action.interrupt': { target: 'idle', actions: ['reportInterrupted', 'clearCurrent', 'dropAll'] },
          'action.cancel': [{ guard: 'isCurrent', target: 'idle', actions: ['reportInterrupted', 'clearCurrent'] }, { actions: 'removeCancelled' }],
        },
      },
    },
  });
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
export function createConnector(entry: ActionConfig, deps: ActionHandleDeps): ActionConnector {
  const connector = deps.plugins.connector(entry.name, entry.connector);
  return connector.create(entry.config ?? {}, {
    logger: deps.logger,
    stateDir: deps.stateDir,
    write: deps.write,
    ...(deps.cloud ? { cloud: deps.cloud } : {}),
  });
}

export function createActionHandle(entry: ActionConfig, deps: ActionHandleDeps): ActionHandle {
  const spec = deps.plugins.action(entry.name);
  const connector = createConnector(entry, deps);
  const logger = deps.logger.child({ action: entry.llm_label });
  const busy = new BehaviorSubject(false);
  let nextId = 1;
  let stopped = false;

  const report = (command: Command, state: ActionState, error?: string) => {
    deps.bus.emit({
      type: 'action',
      at: Date.now(),
      mode: deps.mode,
      label: entry.llm_label,
      name: entry.name,
      connector: entry.connector,
      state,
      value: command.value,
      ...(error !== undefined ? { error } : {}),
    });
    if (state === 'failed') logger.warn({ origin: command.origin }, `${entry.llm_label} failed: ${error ?? ''}`);
    if (state === 'done') command.settle?.();
    else if (state === 'failed' || state === 'dropped' || state === 'interrupted') {
      command.settle?.(new ActionError(state, `${entry.llm_label}: ${error ?? state}`));
    }
  };

  const actor = createActor(actionMachine({ policy: spec.queue, run: (v, s) => connector.run(v, s), report }), {
    systemId: `action.${deps.mode}.${entry.llm_label}`,
  });
  let queueLength = 0;
  actor.subscribe({
    next: (snapshot) => {
      queueLength = snapshot.context.pending.length;
      busy.next(snapshot.matches('running'));
    },
    error: (err) => logger.error({ err: describeError(err) }, 'action actor failed'),
  });
  actor.start();

  /** Validates and enqueues; returns the command, or undefined when invalid (reported as failed). */
  const submit = (value: unknown, origin: Command['origin'], settle?: Command['settle']): Command | undefined => {
    const command: Command = { id: nextId++, value, origin, ...(settle ? { settle } : {}) };
    if (stopped) {
      report(command, 'dropped', 'action stopped');
      return undefined;
    }
    const parsed = spec.args.safeParse(coerceValue(spec.args, value));
    if (!parsed.success) {
      report(command, 'failed', `invalid value for ${entry.llm_label}: ${issuesText(parsed.error)}`);
      return undefined;
    }
    command.value = parsed.data;
    actor.send({ type: 'action.command', command });
    return command;
  };

  return {
    entry,
    busy$: busy.pipe(distinctUntilChanged()) as Observable<boolean>,
    get queueLength() {
      return queueLength;
    },
    dispatch(value, origin) {
      submit(value, origin);
    },
    run(value, signal) {
      return new Promise<void>((resolve, reject) => {
        if (signal.aborted) {
          reject(new ActionError('interrupted', `${entry.llm_label}: aborted before it started`));
          return;
        }
        let command: Command | undefined;
        const onAbort = () => command && actor.send({ type: 'action.cancel', id: command.id });
        command = submit(value, 'hook', (err) => {
          signal.removeEventListener('abort', onAbort);
          if (err) reject(err);
          else resolve();
        });
        if (command) signal.addEventListener('abort', onAbort, { once: true });
      });
    },
    interrupt() {
      actor.send({ type: 'action.interrupt' });
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      // Interrupt first so the running command and the queue are reported and run() callers settle.
      actor.send({ type: 'action.interrupt' });
      actor.stop();
      busy.next(false);
      busy.complete();
      await connector.stop();
    },
  };
}
