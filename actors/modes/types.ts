// Types shared by the mode machine, its hook runner and its handlers: dependencies, clock, events.
import type { AnyActorLogic } from 'xstate';
import type { Logger } from '../../src/log.js';
import type { AgentConfig, HookConfig } from '../../src/config/schema.js';
import type { ModeMemoryStore, TransitionRecord } from '../../src/modes/memory.js';

/** The time source of timers outside XState's own scheduler (hook timeouts). XState's SimulatedClock fits. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(id: unknown): void;
}

export const realClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
};

/** Speaks a hook message through the mode's speak action. Must stop when `signal` aborts. */
export type SpeakFn = (text: string, signal: AbortSignal, mode: string) => Promise<void> | void;
/** Dispatches an action of `mode` by llm_label or name with a value. Must stop when `signal` aborts. */
export type DispatchActionFn = (labelOrName: string, value: unknown, signal: AbortSignal, mode: string) => Promise<void> | void;

/** What the mode machine needs from the agent. Everything is optional; tests replace what they drive. */
export interface ModeDeps {
  /** Pass the same clock to `createActor(..., { clock })`; default the real clock. */
  clock?: Clock;
  logger?: Logger;
  speak?: SpeakFn;
  dispatchAction?: DispatchActionFn;
  /** Directory of function-hook modules; default `<configDir>/hooks`. */
  hooksDir?: string;
  /** Mode memory; default a file under stateDir() when mode_memory_enabled; `false` disables it. */
  memory?: ModeMemoryStore | false;
  /** Name for mode memory and logs; default the config's `name`. */
  configName?: string;
  /** The actor of a running mode (`mode:<name>`), invoked for the whole mode; none: the machine runs hooks and rules only. */
  modeLogic?: (mode: string) => AnyActorLogic | undefined;
}

/** What a hook's handler sees of the running agent. */
export interface HookEnv {
  config: AgentConfig;
  clock: Clock;
  logger: Logger;
  speak?: SpeakFn;
  dispatchAction?: DispatchActionFn;
  hooksDir: string;
}

/** Placeholder values and context of one hook event. */
export interface HookVars {
  hook_type: HookConfig['hook_type'];
  /** The mode whose hooks run (the current mode for global hooks). */
  mode_name: string;
  from_mode: string;
  to_mode: string;
  reason: string;
}

/** Input of one handler actor. */
export interface HandlerInput {
  hook: HookConfig;
  vars: HookVars;
  env: HookEnv;
}

/** A hook that failed, as reported in `hook.failed` events. */
export interface HookFailure {
  hook_type: HookConfig['hook_type'];
  mode: string;
  handler: string;
  on_failure: HookConfig['on_failure'];
  error: string;
}

/**
 * One hook that ran to its end (done, failed, timed out or cancelled), as reported in `hook.run`
 * events. `handler` is the short description (`command "echo hi"`); `duration_ms` is measured on the
 * machine's clock; `async` hooks are reported when they finish, after their event has moved on.
 */
export interface HookRun {
  hook_type: HookConfig['hook_type'];
  mode: string;
  handler: string;
  handler_type: HookConfig['handler_type'];
  async: boolean;
  ok: boolean;
  error?: string;
  /** Cut short because its mode was left or the agent stopped (not a failure). */
  cancelled?: boolean;
  duration_ms: number;
}

/** Events the mode machine accepts. `hook.ran` and `hook.async` are internal: hook sequences report to their machine with them. */
export type ModeEvent =
  /**
   * Final texts offered to keyword rules. With `id`, the machine answers with the emitted
   * `keywords.answered` (same id): `switched` true when a rule fired, or when `mode` (the mode that
   * offers) is not the running mode any more (its tick then ends without asking the model).
   */
  | { type: 'input.text'; text: string; mode?: string; id?: string }
  | { type: 'hook.ran'; run: HookRun }
  | { type: 'hook.async'; input: HandlerInput; replyTo: import('xstate').AnyActorRef }
  | { type: 'mode.switch'; mode: string; reason?: string }
  | { type: 'context.update'; key: string; value: unknown }
  | { type: 'context.update'; values: Record<string, unknown> }
  | { type: 'agent.shutdown' };

/** Events the mode machine emits (`actor.on(type, ...)`). */
export type ModeEmitted =
  | ({ type: 'mode.changed' } & TransitionRecord)
  | { type: 'mode.ready'; mode: string }
  /** The mode left `running` (it starts exiting, or the agent shuts down): its inputs and loop stop. */
  | { type: 'mode.left'; mode: string }
  | { type: 'keywords.answered'; id: string; switched: boolean }
  | { type: 'mode.refused'; requested: string; reason: string }
  | { type: 'mode.aborted'; from: string; to: string; reason: string }
  | { type: 'mode.timeout'; mode: string; at: number }
  | ({ type: 'hook.failed' } & HookFailure)
  | ({ type: 'hook.run' } & HookRun)
  | { type: 'memory.warning'; message: string }
  | { type: 'startup.failed'; reason: string };
