// Lifecycle hooks as actors: one actor per hook (its handler, bounded by a timeout delay) and a sequence actor that runs an event's hooks in order.
import { assign, enqueueActions, fromPromise, sendParent, setup, spawnChild, type ActorRefFrom, type AnyActorRef } from 'xstate';
import type { HookConfig } from '../../src/config/schema.js';
import { describeError } from '../../src/errors.js';
import { childWith } from '../../src/log.js';
import { ActorServices } from '../actor-services.js';
import { HookCancelled, HookError, runAction, runCommand, runFunction, runMessage } from './handlers.js';
import type { HandlerInput, HookEnv, HookFailure, HookRun, HookVars } from './types.js';

/**
 * Hooks of one event, highest `priority` first. Global hooks (from `global_lifecycle_hooks`) and
 * the mode's own hooks for the same event are merged; at equal priority global hooks run first,
 * then each list in the order written.
 */
export function orderHooks(global: readonly HookConfig[], own: readonly HookConfig[], type: HookConfig['hook_type']): HookConfig[] {
  const all = [...global, ...own].filter((h) => h.hook_type === type);
  return all
    .map((hook, i) => ({ hook, i }))
    .sort((a, b) => b.hook.priority - a.hook.priority || a.i - b.i)
    .map((x) => x.hook);
}

/** Short description of a hook for logs and failure reasons. */
export function describeHook(hook: HookConfig): string {
  const c = hook.handler_config;
  const what = c.message ?? c.command ?? (c.module_name ? `${c.module_name}.${c.function}` : c.function) ?? c.action ?? c.action_type ?? '';
  const short = what.length > 60 ? `${what.slice(0, 57)}...` : what;
  return `${hook.handler_type} "${short}"`;
}

/** The inspector name of a hook actor: `hook:<hook_type>:<handler_type>`, numbered when several run at once. */
export function hookActorId(hook: HookConfig, n?: number): string {
  return `hook:${hook.hook_type}:${hook.handler_type}${n === undefined ? '' : `#${n}`}`;
}

/** What one hook actor ends with: its run as reported on the bus, and its failure unless it succeeded. */
export interface HookOutput {
  kind: 'hook.output';
  run: HookRun;
  failure?: HookFailure;
}

/** The hook's data; its environment (clock, logger, speak, dispatchAction: in its input) is kept by its logic (`ActorServices`). */
interface HookContext extends Omit<HandlerInput, 'env'> {
  startedAt: number;
  error: string | undefined;
  cancelled: boolean;
}

/**
 * One hook: its handler runs as a child promise actor (stopping this actor aborts the handler's
 * signal: a command gets SIGTERM) and `timeout_seconds` is an XState delay, so the actor's clock
 * (a SimulatedClock in tests) drives it. Ends with a HookOutput, never with an error.
 */
export function hookLogic() {
  const envs = new ActorServices<HookEnv>();
  return setup({
    types: { input: {} as HandlerInput, context: {} as HookContext, output: {} as HookOutput },
    actors: {
      message: fromPromise<void, HandlerInput>(({ input, signal }) => runMessage(input, signal)),
      command: fromPromise<void, HandlerInput>(({ input, signal }) => runCommand(input, signal)),
      function: fromPromise<void, HandlerInput>(({ input, signal }) => runFunction(input, signal)),
      action: fromPromise<void, HandlerInput>(({ input, signal }) => runAction(input, signal)),
    },
    delays: { hookTimeout: ({ context }) => context.hook.timeout_seconds * 1000 },
    guards: {
      handler: ({ context }, params: { type: HookConfig['handler_type'] }) => context.hook.handler_type === params.type,
    },
    actions: {
      fail: assign((_, params: { error: unknown }) => ({ error: describeError(params.error), cancelled: params.error instanceof HookCancelled })),
    },
  }).createMachine({
    id: 'hook',
    context: ({ input, self }) => {
      envs.keep(self, input.env);
      return { hook: input.hook, vars: input.vars, startedAt: input.env.clock.now(), error: undefined, cancelled: false };
    },
    initial: 'running',
    states: {
      running: {
        after: {
          hookTimeout: {
            target: 'done',
            actions: { type: 'fail', params: ({ context }) => ({ error: new HookError(`timed out after ${context.hook.timeout_seconds} s`) }) },
          },
        },
        initial: 'pick',
        states: {
          pick: {
            always: [
              { guard: { type: 'handler', params: { type: 'message' } }, target: 'message' },
              { guard: { type: 'handler', params: { type: 'command' } }, target: 'command' },
              { guard: { type: 'handler', params: { type: 'function' } }, target: 'function' },
              { target: 'action' },
            ],
          },
          ...handlerStates(envs, ['message', 'command', 'function', 'action'] as const),
        },
      },
      done: { type: 'final' },
    },
    output: ({ context, self }) => outputOf(context, envs.of(self)),
  });
}

function handlerStates<T extends HookConfig['handler_type']>(envs: ActorServices<HookEnv>, types: readonly T[]) {
  const states: Record<string, object> = {};
  for (const type of types) {
    states[type] = {
      invoke: {
        id: 'handler',
        src: type,
        input: ({ context, self }: { context: HookContext; self: AnyActorRef }) => ({
          hook: context.hook,
          vars: context.vars,
          env: envs.of(self),
        }),
        onDone: '#hook.done',
        onError: { target: '#hook.done', actions: { type: 'fail', params: ({ event }: { event: { error: unknown } }) => ({ error: event.error }) } },
      },
    };
  }
  return states as Record<T, object>;
}

function outputOf(c: HookContext, env: HookEnv): HookOutput {
  const handler = describeHook(c.hook);
  const run: HookRun = {
    hook_type: c.vars.hook_type,
    mode: c.vars.mode_name,
    handler,
    handler_type: c.hook.handler_type,
    async: c.hook.async_execution,
    ok: c.error === undefined,
    ...(c.error !== undefined ? { error: c.error } : {}),
    ...(c.cancelled ? { cancelled: true } : {}),
    duration_ms: Math.max(0, env.clock.now() - c.startedAt),
  };
  // A cancelled hook is reported as such, never as a failure (nothing to log, nothing to abort).
  if (c.error === undefined || c.cancelled) return { kind: 'hook.output', run };
  return { kind: 'hook.output', run, failure: { hook_type: c.vars.hook_type, mode: c.vars.mode_name, handler, on_failure: c.hook.on_failure, error: c.error } };
}

/** Logs a failure as its `on_failure` says: log -> warn, abort -> error, ignore -> debug only. */
export function logFailure(env: HookEnv, f: HookFailure): void {
  const line = `${f.hook_type} hook ${f.handler} of mode "${f.mode}" failed: ${f.error}`;
  // `mode` and `hook` come from the logger the sequence binds (a repeated key would appear twice in the JSON line).
  const { mode: _mode, hook_type: _type, ...fields } = f;
  if (f.on_failure === 'ignore') env.logger.debug(fields, line);
  else if (f.on_failure === 'abort') env.logger.error(fields, line);
  else env.logger.warn(fields, line);
}

/** The environment of a hook with a logger that names the mode and the hook event on every line. */
export function hookEnv(env: HookEnv, vars: HookVars): HookEnv {
  return { ...env, logger: childWith(env.logger, { mode: vars.mode_name, hook: vars.hook_type }) };
}

export interface HookRunInput {
  hooks: readonly HookConfig[];
  vars: HookVars;
  env: HookEnv;
}

export interface HookRunOutput {
  /** True when a synchronous hook with `on_failure: abort` failed; the remaining hooks did not run. */
  aborted: boolean;
  reason?: string;
  /** Failures of synchronous hooks (async failures are logged when they happen). */
  failures: HookFailure[];
}

/**
 * Sent to the parent for an async hook: the parent spawns it as its own child, so it outlives the
 * sequence, and answers `hook.async.started` to `replyTo` so the next hook starts after it.
 */
export interface HookAsyncEvent {
  type: 'hook.async';
  input: HandlerInput;
  replyTo: AnyActorRef;
}

/** Sent to the parent for every hook that ended in the sequence (the mode machine emits it as `hook.run`). */
export interface HookRanEvent {
  type: 'hook.ran';
  run: HookRun;
}

/** The sequence's data; its environment (in its input) is kept by its logic (`envOf`). */
interface SequenceContext extends Omit<HookRunInput, 'env'> {
  index: number;
  failures: HookFailure[];
  aborted: boolean;
  reason: string | undefined;
}

type SequenceEvent = { type: `xstate.done.actor.${string}`; output: HookOutput } | { type: 'hook.async.started' };

/**
 * The hooks of one event, in order. A synchronous hook (`async_execution: false`) runs as a child
 * `hook:<hook_type>:<handler_type>` to its end before the next. An async hook is handed to the parent
 * (`hook.async`), which runs it as its own child bounded by its timeout; since its event has moved
 * on, its failure is only logged even with `on_failure: abort`. A failed synchronous hook: `log`
 * logs and goes on, `ignore` goes on silently, `abort` stops the remaining hooks and the output says
 * `aborted`. Stopping the sequence (its state is left) stops the running hook and its handler.
 */
export function hookSequenceLogic() {
  const envs = new ActorServices<HookEnv>();
  /** The environment of a sequence's hooks: its input's, with a logger naming the mode and the event. */
  const envOf = (self: AnyActorRef, vars: HookVars): HookEnv => hookEnv(envs.of(self), vars);
  return setup({
    types: { input: {} as HookRunInput, context: {} as SequenceContext, output: {} as HookRunOutput, events: {} as SequenceEvent },
    actors: { hook: hookLogic() },
    guards: {
      finished: ({ context }) => context.aborted || context.index >= context.hooks.length,
      nextIsAsync: ({ context }) => context.hooks[context.index]!.async_execution,
    },
  }).createMachine({
    id: 'hooks',
    context: ({ input, self }) => {
      envs.keep(self, input.env);
      return { hooks: input.hooks, vars: input.vars, index: 0, failures: [], aborted: false, reason: undefined };
    },
    initial: 'next',
    states: {
      next: {
        always: [{ guard: 'finished', target: 'finished' }, { guard: 'nextIsAsync', target: 'handingOver' }, { target: 'running' }],
      },
      handingOver: {
        entry: sendParent(
          ({ context, self }) =>
            ({
              type: 'hook.async',
              input: { hook: context.hooks[context.index]!, vars: context.vars, env: envOf(self, context.vars) },
              replyTo: self,
            }) satisfies HookAsyncEvent,
        ),
        on: { 'hook.async.started': { target: 'next', actions: assign({ index: ({ context }) => context.index + 1 }) } },
      },
      running: {
        entry: spawnChild('hook', {
          id: ({ context }) => hookActorId(context.hooks[context.index]!),
          input: ({ context, self }) => ({ hook: context.hooks[context.index]!, vars: context.vars, env: envOf(self, context.vars) }),
        }),
        on: {
          'xstate.done.actor.*': {
            target: 'next',
            actions: enqueueActions(({ context, event, enqueue, self }) => {
              const out = (event as Extract<SequenceEvent, { output: HookOutput }>).output;
              enqueue.sendParent({ type: 'hook.ran', run: out.run } satisfies HookRanEvent);
              const hook = context.hooks[context.index]!;
              const next: Partial<SequenceContext> = { index: context.index + 1 };
              if (out.failure) {
                logFailure(envOf(self, context.vars), out.failure);
                if (hook.on_failure !== 'ignore') next.failures = [...context.failures, out.failure];
                if (hook.on_failure === 'abort') {
                  next.aborted = true;
                  next.reason = `${out.failure.hook_type} hook ${out.failure.handler} failed: ${out.failure.error}`;
                }
              }
              enqueue.assign(next);
            }),
          },
        },
      },
      finished: { type: 'final' },
    },
    output: ({ context }) => ({ aborted: context.aborted, ...(context.reason !== undefined ? { reason: context.reason } : {}), failures: context.failures }),
  });
}

export type HookActor = ActorRefFrom<ReturnType<typeof hookLogic>>;

/**
 * The output of an async hook that ended: logged as a failure at most `log` level (its event has
 * moved on, so `abort` cannot apply).
 */
export function logAsyncOutput(env: HookEnv, out: HookOutput): void {
  if (!out.failure) return;
  const f = out.failure;
  logFailure(hookEnv(env, { hook_type: f.hook_type, mode_name: f.mode, from_mode: '', to_mode: '', reason: '' }), {
    ...f,
    on_failure: f.on_failure === 'ignore' ? 'ignore' : 'log',
  });
}
