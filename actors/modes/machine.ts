// The mode statechart built from a configuration: one state per mode, rules as transitions, timers, hooks, memory.
import { assign, createActor, emit, enqueueActions, setup, type Actor, type AnyActorLogic, type DoneActorEvent, type EventObject } from 'xstate';
import type { AgentConfig } from '../../src/config/schema.js';
import { log } from '../../src/log.js';
import { configDir } from '../../src/paths.js';
import { join } from 'node:path';
import { fileModeMemory, modeMemoryPath, type ModeMemoryStore } from '../../src/modes/memory.js';
import {
  compileRules,
  type CompiledRule,
  coolingDown,
  appliesIn,
  decideManual,
  selectContextRule,
  selectInputRule,
  selectTimeoutRule,
} from '../../src/modes/rules.js';
import { commit, initialContext, memoryOf, restoreInput, takeManual, takeRule, type ModeContext, type ModeMachineInput } from './context.js';
import { hookActorId, hookLogic, hookSequenceLogic, logAsyncOutput, orderHooks, type HookOutput, type HookRunOutput } from './hooks.js';
import { modeState, type Delay, type ModeStateKit } from './mode-states.js';
import { realClock, type HookEnv, type HookVars, type ModeDeps, type ModeEmitted, type ModeEvent } from './types.js';

/** How the machine ended: `ok` false when the start-up failed (the CLI exits non-zero with `reason`). */
export interface ModeOutput {
  ok: boolean;
  reason: string | null;
  mode: string;
}

/** Parameters of the rule-timer actions (typed `unknown` so XState's setup inference stays simple). */
const indexOf = (p: unknown): number => (p as { index: number }).index;

const updateValues = (values: Record<string, unknown>, event: ModeEvent): Record<string, unknown> => {
  if (event.type !== 'context.update') return values;
  if ('values' in event) return { ...values, ...event.values };
  return { ...values, [event.key]: event.value };
};

/** What a finished child said, when `event` is its done event (`xstate.done.actor.<id>`); undefined for any other event. */
function doneOutput(event: EventObject): HookRunOutput | HookOutput | undefined {
  return event.type.startsWith('xstate.done.actor.') ? (event as DoneActorEvent<HookRunOutput | HookOutput>).output : undefined;
}

/** The output of a finished hook sequence (`hookSequence`: the hooks of one event). */
function runOutput(event: EventObject): HookRunOutput | undefined {
  const output = doneOutput(event);
  return output && !('kind' in output) ? output : undefined;
}

/** The output of a finished async hook (`hook`, a child of this machine). */
function hookOutput(event: EventObject): HookOutput | undefined {
  const output = doneOutput(event);
  return output && 'kind' in output && output.kind === 'hook.output' ? output : undefined;
}

/** The arguments XState gives a guard of the mode machine. */
type G = { context: ModeContext; event: ModeEvent };

/** The mode machine's named guards: which rule fires, whether a hook run aborted, which mode the machine is in. */
function modeGuards(config: AgentConfig, rules: CompiledRule[], now: () => number) {
  return {
    aborted: ({ event }: G) => Boolean(runOutput(event)?.aborted),
    starting: ({ context }: G) => context.starting,
    canRollback: ({ context }: G) => !context.rollingBack && context.previous !== null && Object.hasOwn(config.modes, context.previous),
    inputRule: ({ context, event }: G) =>
      event.type === 'input.text' &&
      typeof event.text === 'string' &&
      (event.mode === undefined || event.mode === context.mode) &&
      selectInputRule(rules, context.mode, event.text, context.lastFired, now()) !== undefined,
    contextRuleAfterUpdate: ({ context, event }: G) =>
      selectContextRule(rules, context.mode, updateValues(context.values, event), context.lastFired, now()) !== undefined,
    dirtyContextRule: ({ context }: G) =>
      context.contextDirty && selectContextRule(rules, context.mode, context.values, context.lastFired, now()) !== undefined,
    dirty: ({ context }: G) => context.contextDirty,
    manualAllowed: ({ context, event }: G) => decideManual(config, rules, context.mode, (event as { mode: string }).mode, context.lastFired, now()).ok,
    timeoutRule: ({ context }: G) => selectTimeoutRule(rules, context.mode, context.lastFired, now()) !== undefined,
    ruleTimerReady: ({ context }: G, p: { index: number }) =>
      appliesIn(rules[p.index]!, context.mode) && !coolingDown(rules[p.index]!, context.lastFired, now()),
    isMode: ({ context }: G, p: { mode: string }) => context.mode === p.mode,
    hookOutput: ({ event }: G) => hookOutput(event) !== undefined,
  };
}

/**
 * Builds the mode machine of `config`. Timers (mode timeouts, time_based rules, hook timeouts) are
 * XState delays, so a `SimulatedClock` passed to `createActor` drives them; `deps.clock` must be the
 * same clock (hook durations are read from it). See docs/modes.md for every semantic
 * decision.
 *
 * Each mode is a state `entering` (on_entry hooks) -> `running` (`active`, and `timingOut` while
 * on_timeout hooks run) -> `exiting` (on_exit hooks). When `deps.modeLogic` gives a mode actor, the
 * mode's state invokes it as `mode:<name>` for the whole mode (its actions serve the hooks of entry
 * and exit) and tells it `mode.run` when `running` is entered and `mode.standby` when it is left
 * (its inputs, loop and tool servers run only while the mode runs). Ask states by tag: `entering`,
 * `running`, `active`, `timingOut`, `exiting`, `starting`, `stopping`.
 */
// long: the named actions stay in one setup() table, where XState types assign/emit against the machine's context and events; states and guards are built outside.
export function createModeMachine(config: AgentConfig, deps: ModeDeps = {}) {
  const clock = deps.clock ?? realClock;
  const logger = deps.logger ?? log();
  const configName = deps.configName ?? config.name;
  const memory: ModeMemoryStore | undefined =
    deps.memory === false || !config.mode_memory_enabled ? undefined : (deps.memory ?? fileModeMemory(modeMemoryPath(configName), (m) => logger.warn(m)));
  const env: HookEnv = { config, clock, logger, speak: deps.speak, dispatchAction: deps.dispatchAction, hooksDir: deps.hooksDir ?? join(configDir(), 'hooks') };
  const rules = compileRules(config);
  const modeNames = Object.keys(config.modes);
  const globalHooks = config.global_lifecycle_hooks;
  const hooksOf = (mode: string, type: HookVars['hook_type']) => orderHooks(globalHooks, config.modes[mode]?.lifecycle_hooks ?? [], type);
  const now = () => clock.now();
  const runInput = (hooks: HookVars['hook_type'], mode: string, vars: Omit<HookVars, 'hook_type' | 'mode_name'>) => ({
    hooks: hooksOf(mode, hooks),
    vars: { hook_type: hooks, mode_name: mode, ...vars },
    env,
  });
  const modeLogics: Record<string, AnyActorLogic> = {};
  for (const name of modeNames) {
    const logic = deps.modeLogic?.(name);
    if (logic) modeLogics[`mode:${name}`] = logic;
  }

  const m = setup({
    types: {
      context: {} as ModeContext,
      events: {} as ModeEvent,
      input: {} as ModeMachineInput,
      emitted: {} as ModeEmitted,
      output: {} as ModeOutput,
    },
    actors: { hookSequence: hookSequenceLogic(), hook: hookLogic(), ...modeLogics },
    actions: {
      assignValues: assign({ values: ({ context, event }) => updateValues(context.values, event) }),
      // Context values (gps_fix, latitude, longitude) reach the safety governor's geofence, when it runs in this system.
      tellGovernor: enqueueActions(({ context, system, enqueue }) => {
        const governor = system.get('safety');
        // biome-ignore lint/suspicious/noExplicitAny: the governor's events are not the mode machine's
        if (governor) enqueue.sendTo(governor, { type: 'safety.context', values: context.values } as any);
      }),
      answerKeywords: enqueueActions(({ context, event, enqueue }, p: unknown) => {
        const e = event as Extract<ModeEvent, { type: 'input.text' }>;
        if (e.type !== 'input.text' || e.id === undefined) return;
        const fired = (p as { fired: boolean }).fired;
        enqueue.emit({ type: 'keywords.answered', id: e.id, switched: fired || (e.mode !== undefined && e.mode !== context.mode) });
      }),
      emitLeft: emit(({ context }) => ({ type: 'mode.left' as const, mode: context.mode })),
      markDirty: assign({ contextDirty: true }),
      clearDirty: assign({ contextDirty: false }),
      takeInputRule: assign(({ context, event }) =>
        takeRule(context, selectInputRule(rules, context.mode, (event as { text: string }).text, context.lastFired, now())!, now()),
      ),
      takeContextRule: assign(({ context }) => takeRule(context, selectContextRule(rules, context.mode, context.values, context.lastFired, now())!, now())),
      takeTimeoutRule: assign(({ context }) => takeRule(context, selectTimeoutRule(rules, context.mode, context.lastFired, now())!, now())),
      takeRuleTimer: assign(({ context }, p: unknown) => takeRule(context, { rule: rules[indexOf(p)]!, reason: 'rule timeout' }, now())),
      takeManual: assign(({ context, event }) => {
        const e = event as { mode: string; reason?: string };
        const d = decideManual(config, rules, context.mode, e.mode, context.lastFired, now());
        return takeManual(context, e.mode, d.ok ? d.rule : null, e.reason, now());
      }),
      refuseManual: enqueueActions(({ context, event, enqueue }) => {
        const e = event as { mode: string };
        const d = decideManual(config, rules, context.mode, e.mode, context.lastFired, now());
        const reason = d.ok ? 'refused' : d.reason;
        logger.info({ requested: e.mode, mode: context.mode }, `manual switch refused: ${reason}`);
        enqueue.emit({ type: 'mode.refused', requested: e.mode, reason });
      }),
      refuseBusy: emit(({ event }) => ({
        type: 'mode.refused' as const,
        requested: (event as { mode: string }).mode,
        reason: 'a mode switch is in progress (hooks are running)',
      })),
      commitSwitch: enqueueActions(({ context, enqueue }) => {
        const pending = context.pending!;
        const next = { ...context, ...commit(context, pending, now()) };
        enqueue.assign(commit(context, pending, now()));
        enqueue.emit({ type: 'mode.changed', ...next.lastTransition! });
        logger.info(
          { mode: pending.to, from: pending.from, to: pending.to, rule: pending.rule_index },
          `mode ${pending.from} -> ${pending.to} (${pending.reason})`,
        );
        memory?.save(memoryOf(configName, next));
      }),
      rollback: enqueueActions(({ context, event, enqueue }) => {
        const reason = runOutput(event)?.reason ?? 'on_entry hook aborted';
        const back = { from: context.mode, to: context.previous!, rule_index: null, trigger: 'rollback', reason };
        const next = { ...context, ...commit(context, back, now()) };
        enqueue.emit({ type: 'mode.aborted', from: context.previous!, to: context.mode, reason });
        enqueue.assign({ ...commit(context, back, now()), rollingBack: true });
        enqueue.emit({ type: 'mode.changed', ...next.lastTransition! });
        logger.warn(
          { mode: context.previous, from: context.mode, to: context.previous },
          `switch to ${context.mode} aborted, back to ${context.previous}: ${reason}`,
        );
        memory?.save(memoryOf(configName, next));
      }),
      entered: enqueueActions(({ context, enqueue }) => {
        enqueue.assign({ starting: false, rollingBack: false });
        enqueue.emit({ type: 'mode.ready', mode: context.mode });
      }),
      failStartup: enqueueActions(({ context, event, enqueue }) => {
        const reason = runOutput(event)?.reason ?? 'start-up failed';
        enqueue.assign({ failure: reason });
        enqueue.emit({ type: 'startup.failed', reason });
        logger.error({ mode: context.mode }, `start-up failed: ${reason}`);
      }),
      emitFailures: enqueueActions(({ event, enqueue }) => {
        for (const f of runOutput(event)?.failures ?? []) enqueue.emit({ type: 'hook.failed', ...f });
      }),
      emitTimeout: enqueueActions(({ context, enqueue }) => {
        enqueue.emit({ type: 'mode.timeout', mode: context.mode, at: now() });
      }),
      restartModeTimer: assign({ modeTimerBase: () => now() }),
      restartRuleTimer: assign({ ruleTimerBase: ({ context }, p: unknown) => ({ ...context.ruleTimerBase, [indexOf(p)]: now() }) }),
      emitHookRun: emit(({ event }) => ({ type: 'hook.run' as const, ...(event as Extract<ModeEvent, { type: 'hook.ran' }>).run })),
      // An async hook outlives the sequence that started it: it runs as a child of this machine until
      // it ends, reaches its timeout, or the machine stops (shutdown).
      spawnAsyncHook: enqueueActions(({ context, event, enqueue }) => {
        if (event.type !== 'hook.async') return;
        const { input, replyTo } = event;
        enqueue.assign({ asyncHooks: context.asyncHooks + 1 });
        enqueue.spawnChild('hook', { id: hookActorId(input.hook, context.asyncHooks + 1), input });
        enqueue.sendTo(replyTo, { type: 'hook.async.started' });
      }),
      endAsyncHook: enqueueActions(({ event, enqueue }) => {
        const out = hookOutput(event);
        if (!out) return;
        logAsyncOutput(env, out);
        enqueue.emit({ type: 'hook.run', ...out.run });
      }),
      emitWarnings: enqueueActions(({ context, enqueue }, p: unknown) => {
        for (const message of (p as { warnings: string[] }).warnings) {
          logger.warn({ mode: context.mode }, message);
          enqueue.emit({ type: 'memory.warning', message });
        }
      }),
    },
    guards: modeGuards(config, rules, now),
  });

  const delays: Record<string, Delay> = {};
  const kit: ModeStateKit = { config, rules, now, runInput, modeActors: new Set(Object.keys(modeLogics)) };
  const modeStates = Object.fromEntries(modeNames.map((name, i) => [name, modeState(kit, name, i, delays)]));

  return m
    .createMachine({
      id: 'modes',
      initial: 'starting',
      context: ({ input }: { input: ModeMachineInput }) => initialContext(config, input, now()),
      output: ({ context }: { context: ModeContext }) => ({ ok: context.failure === null, reason: context.failure, mode: context.mode }),
      on: {
        'mode.switch': { actions: 'refuseBusy' },
        'context.update': { actions: ['assignValues', 'tellGovernor', 'markDirty'] },
        // Offered while no mode runs (hooks, shutdown): the tick that offered ends without the model.
        'input.text': { actions: { type: 'answerKeywords', params: { fired: true } } },
        'hook.ran': { actions: 'emitHookRun' },
        'hook.async': { actions: 'spawnAsyncHook' },
        'xstate.done.actor.*': { guard: 'hookOutput', actions: 'endAsyncHook' },
      },
      states: {
        starting: {
          tags: ['starting'],
          entry: {
            type: 'emitWarnings',
            params: ({ event }: { event: unknown }) => ({ warnings: (event as { input?: ModeMachineInput }).input?.warnings ?? [] }),
          },
          always: modeNames.map((mode, i) => ({ guard: { type: 'isMode', params: { mode } }, target: `#modes-${i}-startup` })),
        },
        route: {
          always: modeNames.map((mode) => ({ guard: { type: 'isMode', params: { mode } }, target: mode })),
        },
        ...(modeStates as object),
        stopped: { type: 'final' },
        failed: { type: 'final' },
      },
      // eslint-disable-next-line @typescript-eslint/no-explicit-any
    } as any)
    .provide({ delays: delays as any });
}

export type ModeMachine = ReturnType<typeof createModeMachine>;

/**
 * Creates (not starts) the mode machine of `config` as a root actor, for tests and tools that run
 * it alone: restores mode memory, uses `deps.clock` as the actor's clock, registers as systemId
 * `modes`. In the agent the mode machine is a child of the agent actor instead.
 */
export function createModeActor(config: AgentConfig, deps: ModeDeps = {}): Actor<ModeMachine> {
  const logger = deps.logger ?? log();
  const store =
    deps.memory === false || !config.mode_memory_enabled
      ? undefined
      : (deps.memory ?? fileModeMemory(modeMemoryPath(deps.configName ?? config.name), (m) => logger.warn(m)));
  const machine = createModeMachine(config, { ...deps, memory: store ?? false });
  return createActor(machine, { input: restoreInput(config, store), clock: deps.clock ?? realClock, systemId: 'modes' });
}
