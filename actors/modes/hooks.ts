// Runs the lifecycle hooks of one event: priority order, sync with a timeout, async cancelled at its timeout, on_failure.
import { createActor, fromPromise } from 'xstate';
import type { HookConfig } from '../../src/config/schema.js';
import { describeError } from '../../src/errors.js';
import { childWith } from '../../src/log.js';
import { handlerActors, HookError } from './handlers.js';
import type { HookEnv, HookFailure, HookRun, HookVars } from './types.js';

/**
 * Hooks of one event, highest `priority` first. Global hooks (from `global_lifecycle_hooks`) and
 * the mode's own hooks for the same event are merged; at equal priority global hooks run first,
 * then each list in the order written.
 */
export function orderHooks(global: readonly HookConfig[], own: readonly HookConfig[], type: HookConfig['hook_type']): HookConfig[] {
  const all = [...global, ...own].filter((h) => h.hook_type === type);
  return all.map((hook, i) => ({ hook, i })).sort((a, b) => b.hook.priority - a.hook.priority || a.i - b.i).map((x) => x.hook);
}

/** Short description of a hook for logs and failure reasons. */
export function describeHook(hook: HookConfig): string {
  const c = hook.handler_config;
  const what = c.message ?? c.command ?? (c.module_name ? `${c.module_name}.${c.function}` : c.function) ?? c.action ?? c.action_type ?? '';
  const short = what.length > 60 ? `${what.slice(0, 57)}...` : what;
  return `${hook.handler_type} "${short}"`;
}

/**
 * Runs one hook's handler as an actor and settles when it finishes, fails, reaches its
 * `timeout_seconds` (measured on the env clock) or `signal` aborts. On timeout or abort the handler
 * actor is stopped, which aborts the handler's own signal (a command gets SIGTERM).
 */
export function runHook(hook: HookConfig, vars: HookVars, env: HookEnv, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new HookError('cancelled'));
    const actor = createActor(handlerActors[hook.handler_type], { input: { hook, vars, env } });
    let settled = false;
    const finish = (err?: unknown) => {
      if (settled) return;
      settled = true;
      env.clock.clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      sub.unsubscribe();
      if (err === undefined) resolve();
      else reject(err);
    };
    const timer = env.clock.setTimeout(() => {
      finish(new HookError(`timed out after ${hook.timeout_seconds} s`));
      actor.stop();
    }, hook.timeout_seconds * 1000);
    const onAbort = () => {
      finish(new HookError('cancelled'));
      actor.stop();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    const sub = actor.subscribe({
      complete: () => finish(),
      error: (err) => finish(err instanceof Error ? err : new HookError(describeError(err))),
    });
    actor.start();
  });
}

/** Owner of hooks started with `async_execution: true`: each is cancelled at its timeout or by `abortAll`. */
export class AsyncHooks {
  private readonly running = new Set<AbortController>();

  /**
   * Starts `hook` in the background. `onFailure` gets its failure (not a cancellation by `abortAll`);
   * `onRun` gets every end that is not such a cancellation, success included.
   */
  start(hook: HookConfig, vars: HookVars, env: HookEnv, onFailure: (f: HookFailure) => void, onRun?: (run: HookRun) => void): void {
    const controller = new AbortController();
    this.running.add(controller);
    const startedAt = env.clock.now();
    runHook(hook, vars, env, controller.signal)
      .then(
        () => onRun?.(runOf(hook, vars, env, startedAt)),
        (err) => {
          if (controller.signal.aborted && describeError(err) === 'cancelled') return;
          onFailure(failureOf(hook, vars, err));
          onRun?.(runOf(hook, vars, env, startedAt, err));
        },
      )
      .finally(() => this.running.delete(controller));
  }

  /** Number of async hooks still running. */
  get size(): number {
    return this.running.size;
  }

  abortAll(): void {
    for (const c of this.running) c.abort();
    this.running.clear();
  }
}

function runOf(hook: HookConfig, vars: HookVars, env: HookEnv, startedAt: number, err?: unknown): HookRun {
  return {
    hook_type: vars.hook_type,
    mode: vars.mode_name,
    handler: describeHook(hook),
    handler_type: hook.handler_type,
    async: hook.async_execution,
    ok: err === undefined,
    ...(err !== undefined ? { error: describeError(err) } : {}),
    duration_ms: Math.max(0, env.clock.now() - startedAt),
  };
}

function failureOf(hook: HookConfig, vars: HookVars, err: unknown): HookFailure {
  return { hook_type: vars.hook_type, mode: vars.mode_name, handler: describeHook(hook), on_failure: hook.on_failure, error: describeError(err) };
}

/** Logs a failure as its `on_failure` says: log -> warn, abort -> error, ignore -> debug only. */
export function logFailure(env: HookEnv, f: HookFailure): void {
  const line = `${f.hook_type} hook ${f.handler} of mode "${f.mode}" failed: ${f.error}`;
  // `mode` and `hook` come from the logger runHooks binds (a repeated key would appear twice in the JSON line).
  const { mode: _mode, hook_type: _type, ...fields } = f;
  if (f.on_failure === 'ignore') env.logger.debug(fields, line);
  else if (f.on_failure === 'abort') env.logger.error(fields, line);
  else env.logger.warn(fields, line);
}

export interface HookRunInput {
  hooks: readonly HookConfig[];
  vars: HookVars;
  env: HookEnv;
  asyncHooks: AsyncHooks;
  /** Told of every hook that ends (the mode machine turns it into a `hook.run` event). */
  report?: (run: HookRun) => void;
}

export interface HookRunOutput {
  /** True when a synchronous hook with `on_failure: abort` failed; the remaining hooks did not run. */
  aborted: boolean;
  reason?: string;
  /** Failures of synchronous hooks (async failures are logged when they happen). */
  failures: HookFailure[];
}

/**
 * Runs `hooks` in order. A synchronous hook (`async_execution: false`) runs to completion, bounded
 * by its timeout, before the next. An async hook is started and the run goes on; it is still
 * cancelled at its timeout, and since its event has moved on, its failure is only logged even with
 * `on_failure: abort`. A failed synchronous hook: `log` logs and goes on, `ignore` goes on
 * silently, `abort` stops the remaining hooks of the event and reports `aborted`.
 */
export async function runHooks(input: HookRunInput, signal: AbortSignal): Promise<HookRunOutput> {
  const failures: HookFailure[] = [];
  if (!input.hooks.length) return { aborted: false, failures };
  // Every line a hook (or its handler) logs names the mode and the hook event.
  const env: HookEnv = { ...input.env, logger: childWith(input.env.logger, { mode: input.vars.mode_name, hook: input.vars.hook_type }) };
  const report = (run: HookRun) => {
    try {
      input.report?.(run);
    } catch (err) {
      env.logger.warn(`hook report failed: ${describeError(err)}`);
    }
  };
  for (const hook of input.hooks) {
    if (signal.aborted) break;
    if (hook.async_execution) {
      input.asyncHooks.start(hook, input.vars, env, (f) => logFailure(env, { ...f, on_failure: f.on_failure === 'ignore' ? 'ignore' : 'log' }), report);
      continue;
    }
    const startedAt = env.clock.now();
    try {
      await runHook(hook, input.vars, env, signal);
      report(runOf(hook, input.vars, env, startedAt));
    } catch (err) {
      // A hook cut short by leaving its state (a shutdown, the machine stopping) is reported as cancelled.
      report(runOf(hook, input.vars, env, startedAt, err));
      if (signal.aborted) break;
      const failure = failureOf(hook, input.vars, err);
      logFailure(env, failure);
      if (hook.on_failure !== 'ignore') failures.push(failure);
      if (hook.on_failure === 'abort') {
        return { aborted: true, reason: `${failure.hook_type} hook ${failure.handler} failed: ${failure.error}`, failures };
      }
    }
  }
  return { aborted: false, failures };
}

/** The hook runner as an actor for the mode machine: stopping it (leaving the state) cancels the running hook. */
export const hookRunner = fromPromise<HookRunOutput, HookRunInput>(({ input, signal }) => runHooks(input, signal));
