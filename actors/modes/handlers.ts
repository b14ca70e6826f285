// The four hook handler types (message, command, function, action), each a small promise actor that honours its AbortSignal.
import { spawn } from 'node:child_process';
import { pathToFileURL } from 'node:url';
import { fromPromise } from 'xstate';
import { CortexError, describeError } from '../../src/errors.js';
import { ActionError } from '../actions/action.js';
import { fillPlaceholders, splitArgv } from '../../src/config/hook-argv.js';
import { locateHookModule } from '../../src/config/hook-module.js';
import type { HandlerInput, HookVars } from './types.js';

/** A hook handler that did not succeed; the message says why without secrets. */
export class HookError extends CortexError {
  constructor(message: string) {
    super('hook_failed', message);
    this.name = 'HookError';
  }
}

/**
 * A hook cut short because what it drove went away: its message or action was interrupted when its
 * mode was left (an async greeting still speaking at a switch) or the agent stopped. Not a failure.
 */
export class HookCancelled extends CortexError {
  constructor(message: string) {
    super('hook_cancelled', message);
    this.name = 'HookCancelled';
  }
}

/** Turns an action cut short by its mode stopping into HookCancelled; anything else is rethrown as is. */
function cancelledWhenStopped(err: unknown): never {
  if (err instanceof ActionError && err.actionStopped) throw new HookCancelled('cancelled: its mode was left');
  throw err;
}

/** Largest amount of a command's stdout/stderr kept for the log, per stream. */
const OUTPUT_LIMIT = 4096;
/** Grace between SIGTERM and SIGKILL for a command cancelled at its timeout. */
const KILL_GRACE_MS = 1000;

function placeholders(vars: HookVars): Record<string, string> {
  return { ...vars };
}

/** Rejects as soon as `signal` aborts; used to stop waiting on work that ignores its signal. */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = () => reject(new HookError(signal.reason instanceof Error ? signal.reason.message : 'cancelled'));
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

function modeActions(input: HandlerInput) {
  return input.env.config.modes[input.vars.mode_name]?.agent_actions ?? [];
}

/** `message`: speaks through the mode's speak action when the mode has one and a speaker is wired; logs otherwise. */
export async function runMessage(input: HandlerInput, signal: AbortSignal): Promise<void> {
  const text = fillPlaceholders(input.hook.handler_config.message ?? '', placeholders(input.vars));
  const canSpeak = modeActions(input).some((a) => a.llm_label === 'speak' || a.name === 'speak');
  if (input.env.speak && canSpeak) {
    await Promise.race([Promise.resolve(input.env.speak(text, signal, input.vars.mode_name)), untilAborted(signal)]).catch(cancelledWhenStopped);
    return;
  }
  input.env.logger.info(text);
}

/** `action`: dispatches an action of the mode, found by llm_label or name, with `value` (or `action_config`). */
export async function runAction(input: HandlerInput, signal: AbortSignal): Promise<void> {
  const cfg = input.hook.handler_config;
  const target = cfg.action ?? cfg.action_type ?? '';
  const value = cfg.value !== undefined ? cfg.value : cfg.action_config;
  const actions = modeActions(input);
  const action = actions.find((a) => a.llm_label === target) ?? actions.find((a) => a.name === target);
  if (!action) {
    const known = actions.map((a) => a.llm_label).join(', ') || 'none';
    throw new HookError(`mode "${input.vars.mode_name}" has no action "${target}" (actions: ${known})`);
  }
  if (!input.env.dispatchAction) throw new HookError(`no action dispatcher is wired to run action "${target}"`);
  await Promise.race([Promise.resolve(input.env.dispatchAction(action.llm_label, value, signal, input.vars.mode_name)), untilAborted(signal)]).catch(
    cancelledWhenStopped,
  );
}

/** Resolves and loads a function hook (see locateHookModule for the rules). */
export async function resolveHookFunction(hooksDir: string, moduleName: string | undefined, fn: string): Promise<(ctx: unknown) => unknown> {
  const where = locateHookModule(hooksDir, moduleName, fn);
  if (!where.ok) throw new HookError(where.message);
  const loaded = (await import(pathToFileURL(where.file).href)) as Record<string, unknown> & { default?: Record<string, unknown> };
  const found = loaded[where.name] ?? loaded.default?.[where.name];
  if (typeof found !== 'function') throw new HookError(`module "${where.module}" has no exported function "${where.name}"`);
  return found as (ctx: unknown) => unknown;
}

/** What a function hook is called with. Returning `false` (or a promise of it) counts as failure. */
export interface FunctionHookContext extends HookVars {
  config_name: string;
  args: unknown;
  signal: AbortSignal;
  log: (message: string) => void;
}

/** `function`: calls the resolved function with the hook context; sync or async. */
export async function runFunction(input: HandlerInput, signal: AbortSignal): Promise<void> {
  const cfg = input.hook.handler_config;
  const fn = await resolveHookFunction(input.env.hooksDir, cfg.module_name, cfg.function ?? '');
  const ctx: FunctionHookContext = {
    ...input.vars,
    config_name: input.env.config.name,
    args: cfg.args,
    signal,
    log: (message) => input.env.logger.info(message),
  };
  const result = await Promise.race([Promise.resolve().then(() => fn(ctx)), untilAborted(signal)]);
  if (result === false) throw new HookError(`function hook "${cfg.function}" returned false`);
}

function tail(text: string): string {
  return text.length > OUTPUT_LIMIT ? `...${text.slice(-OUTPUT_LIMIT)}` : text;
}

/**
 * `command`: splits the command into argv (quote-aware, no shell), substitutes placeholders into
 * each argument, and runs the program directly. Exit code 0 is success; stdout and stderr are
 * logged (last 4 KiB each). When `signal` aborts the child gets SIGTERM, then SIGKILL after 1 s.
 */
export function runCommand(input: HandlerInput, signal: AbortSignal): Promise<void> {
  const argv = splitArgv(input.hook.handler_config.command ?? '').map((a) => fillPlaceholders(a, placeholders(input.vars)));
  const [program, ...args] = argv;
  if (!program) return Promise.reject(new HookError('command hook has an empty command'));
  const logger = input.env.logger;
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(new HookError('cancelled before start'));
    const child = spawn(program, args, { shell: false, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killTimer: ReturnType<typeof setTimeout> | undefined;
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout = tail(stdout + d)));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = tail(stderr + d)));
    const onAbort = () => {
      child.kill('SIGTERM');
      killTimer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      killTimer.unref();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    child.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(new HookError(`command "${program}" could not start: ${describeError(err)}`));
    });
    child.on('close', (code, sig) => {
      signal.removeEventListener('abort', onAbort);
      if (killTimer) clearTimeout(killTimer);
      // mode and hook are bound on the logger by the hook runner.
      const out = { argv, stdout: stdout.trim(), stderr: stderr.trim() };
      if (signal.aborted) return reject(new HookError(`command "${program}" was killed (${sig ?? 'cancelled'})`));
      if (code === 0) {
        logger.info(out, `hook command "${program}" succeeded`);
        return resolve();
      }
      logger.warn(out, `hook command "${program}" failed`);
      reject(
        new HookError(
          `command "${program}" exited with ${code === null ? `signal ${sig}` : `code ${code}`}${stderr.trim() ? `: ${tail(stderr.trim()).slice(-200)}` : ''}`,
        ),
      );
    });
  });
}

const RUNNERS = { message: runMessage, command: runCommand, function: runFunction, action: runAction } as const;

/** The handler actors, by handler_type; each runs one hook and resolves on success. */
export const handlerActors = {
  message: fromPromise<void, HandlerInput>(({ input, signal }) => runMessage(input, signal)),
  command: fromPromise<void, HandlerInput>(({ input, signal }) => runCommand(input, signal)),
  function: fromPromise<void, HandlerInput>(({ input, signal }) => runFunction(input, signal)),
  action: fromPromise<void, HandlerInput>(({ input, signal }) => runAction(input, signal)),
};

/** Runs one handler function directly (used by tests that need no actor). */
export function runHandler(input: HandlerInput, signal: AbortSignal): Promise<void> {
  return RUNNERS[input.hook.handler_type](input, signal);
}
