// The mode statechart built from a configuration: one state per mode, rules as transitions, timers, hooks, memory.
import { and, assign, createActor, emit, enqueueActions, fromPromise, setup, type Actor, type AnyActorRef } from 'xstate';
import type { AgentConfig } from '../../src/config/schema.js';
import { log } from '../../src/log.js';
import { configDir } from '../../src/paths.js';
import { join } from 'node:path';
import { fileModeMemory, modeMemoryPath, type ModeMemoryStore } from '../../src/modes/memory.js';
import { compileRules, coolingDown, appliesIn, decideManual, ruleTimers, selectContextRule, selectInputRule, selectTimeoutRule } from '../../src/modes/rules.js';
import { commit, initialContext, memoryOf, restoreInput, takeManual, takeRule, type ModeContext, type ModeMachineInput } from './context.js';
import { AsyncHooks, hookRunner, orderHooks, runHooks, type HookRunOutput } from './hooks.js';
import { realClock, type HookEnv, type HookRun, type HookVars, type ModeDeps, type ModeEmitted, type ModeEvent } from './types.js';

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

/**
 * Builds the mode machine of `config`. Timers (mode timeouts, time_based rules) are XState delays,
 * so a `SimulatedClock` passed to `createActor` drives them; hook timeouts use `deps.clock`, which
 * must be the same clock. See docs in the README section "Modes" for every semantic decision.
 */
export function createModeMachine(config: AgentConfig, deps: ModeDeps = {}, asyncHooks = new AsyncHooks()) {
  const clock = deps.clock ?? realClock;
  const logger = deps.logger ?? log();
  const configName = deps.configName ?? config.name;
  const memory: ModeMemoryStore | undefined =
    deps.memory === false || !config.mode_memory_enabled
      ? undefined
      : (deps.memory ?? fileModeMemory(modeMemoryPath(configName), (m) => logger.warn(m)));
  const env: HookEnv = { config, clock, logger, speak: deps.speak, dispatchAction: deps.dispatchAction, hooksDir: deps.hooksDir ?? join(configDir(), 'hooks') };
  const rules = compileRules(config);
  const modeNames = Object.keys(config.modes);
  const globalHooks = config.global_lifecycle_hooks;
  const hooksOf = (mode: string, type: HookVars['hook_type']) => orderHooks(globalHooks, config.modes[mode]?.lifecycle_hooks ?? [], type);
  const now = () => clock.now();
  /**
   * Hook runners report each finished hook back to `machine` as `hook.ran`, which the machine emits as
   * `hook.run` (async hooks finish after their event; a machine that has ended hears nothing).
   */
  const reporter = (machine: AnyActorRef) => (run: HookRun) => {
    if (machine.getSnapshot().status === 'active') machine.send({ type: 'hook.ran', run });
  };
  const runInput = (hooks: HookVars['hook_type'], mode: string, vars: Omit<HookVars, 'hook_type' | 'mode_name'>, machine: AnyActorRef) => ({
    hooks: hooksOf(mode, hooks),
    vars: { hook_type: hooks, mode_name: mode, ...vars },
    env,
    asyncHooks,
    report: reporter(machine),
  });

  /** Shutdown: the current mode's on_exit hooks, then on_shutdown hooks (global and the mode's). */
  const shutdownRunner = fromPromise<HookRunOutput, { mode: string; machine: AnyActorRef }>(async ({ input, signal }) => {
    const vars = { from_mode: input.mode, to_mode: '', reason: 'shutdown' };
    const exit = await runHooks(runInput('on_exit', input.mode, vars, input.machine), signal);
    const down = await runHooks(runInput('on_shutdown', input.mode, vars, input.machine), signal);
    return { aborted: false, failures: [...exit.failures, ...down.failures] };
  });

  const m = setup({
    types: {
      context: {} as ModeContext,
      events: {} as ModeEvent,
      input: {} as ModeMachineInput,
      emitted: {} as ModeEmitted,
      output: {} as ModeOutput,
    },
    actors: { hookRunner, shutdownRunner },
    actions: {
      assignValues: assign({ values: ({ context, event }) => updateValues(context.values, event) }),
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
        logger.info({ mode: pending.to, from: pending.from, to: pending.to, rule: pending.rule_index }, `mode ${pending.from} -> ${pending.to} (${pending.reason})`);
        memory?.save(memoryOf(configName, next));
      }),
      rollback: enqueueActions(({ context, event, enqueue }) => {
        const reason = (event as unknown as { output: HookRunOutput }).output.reason ?? 'on_entry hook aborted';
        const back = { from: context.mode, to: context.previous!, rule_index: null, trigger: 'rollback', reason };
        const next = { ...context, ...commit(context, back, now()) };
        enqueue.emit({ type: 'mode.aborted', from: context.previous!, to: context.mode, reason });
        enqueue.assign({ ...commit(context, back, now()), rollingBack: true });
        enqueue.emit({ type: 'mode.changed', ...next.lastTransition! });
        logger.warn({ mode: context.previous, from: context.mode, to: context.previous }, `switch to ${context.mode} aborted, back to ${context.previous}: ${reason}`);
        memory?.save(memoryOf(configName, next));
      }),
      entered: enqueueActions(({ context, enqueue }) => {
        enqueue.assign({ starting: false, rollingBack: false });
        enqueue.emit({ type: 'mode.ready', mode: context.mode });
      }),
      failStartup: enqueueActions(({ context, event, enqueue }) => {
        const reason = (event as unknown as { output?: HookRunOutput }).output?.reason ?? 'start-up failed';
        enqueue.assign({ failure: reason });
        enqueue.emit({ type: 'startup.failed', reason });
        logger.error({ mode: context.mode }, `start-up failed: ${reason}`);
      }),
      emitFailures: enqueueActions(({ event, enqueue }) => {
        const out = (event as unknown as { output?: HookRunOutput }).output;
        for (const f of out?.failures ?? []) enqueue.emit({ type: 'hook.failed', ...f });
      }),
      emitTimeout: enqueueActions(({ context, enqueue }) => {
        enqueue.emit({ type: 'mode.timeout', mode: context.mode, at: now() });
      }),
      restartModeTimer: assign({ modeTimerBase: () => now() }),
      restartRuleTimer: assign({ ruleTimerBase: ({ context }, p: unknown) => ({ ...context.ruleTimerBase, [indexOf(p)]: now() }) }),
      emitHookRun: emit(({ event }) => ({ type: 'hook.run' as const, ...(event as Extract<ModeEvent, { type: 'hook.ran' }>).run })),
      emitWarnings: enqueueActions(({ context, enqueue }, p: unknown) => {
        for (const message of (p as { warnings: string[] }).warnings) {
          logger.warn({ mode: context.mode }, message);
          enqueue.emit({ type: 'memory.warning', message });
        }
      }),
      abortAsyncHooks: () => asyncHooks.abortAll(),
    },
    guards: {
      aborted: ({ event }) => Boolean((event as unknown as { output?: HookRunOutput }).output?.aborted),
      starting: ({ context }) => context.starting,
      canRollback: ({ context }) => !context.rollingBack && context.previous !== null && Object.hasOwn(config.modes, context.previous),
      inputRule: ({ context, event }) =>
        event.type === 'input.text' && typeof event.text === 'string' && selectInputRule(rules, context.mode, event.text, context.lastFired, now()) !== undefined,
      contextRuleAfterUpdate: ({ context, event }) =>
        selectContextRule(rules, context.mode, updateValues(context.values, event), context.lastFired, now()) !== undefined,
      dirtyContextRule: ({ context }) => context.contextDirty && selectContextRule(rules, context.mode, context.values, context.lastFired, now()) !== undefined,
      dirty: ({ context }) => context.contextDirty,
      manualAllowed: ({ context, event }) => decideManual(config, rules, context.mode, (event as { mode: string }).mode, context.lastFired, now()).ok,
      timeoutRule: ({ context }) => selectTimeoutRule(rules, context.mode, context.lastFired, now()) !== undefined,
      ruleTimerReady: ({ context }, p: { index: number }) => appliesIn(rules[p.index]!, context.mode) && !coolingDown(rules[p.index]!, context.lastFired, now()),
      isMode: ({ context }, p: { mode: string }) => context.mode === p.mode,
    },
  });

  const delays: Record<string, (args: { context: ModeContext }) => number> = {};
  const modeStates: Record<string, unknown> = {};
  for (const name of modeNames) {
    const mode = config.modes[name]!;
    const after: Record<string, unknown> = {};
    if (mode.timeout_seconds !== undefined) {
      const ms = mode.timeout_seconds * 1000;
      delays[`timeout.${name}`] = ({ context }) => Math.max(0, ms - (now() - context.modeTimerBase));
      after[`timeout.${name}`] = { target: 'timingOut' };
    }
    for (const rule of ruleTimers(rules, name)) {
      const key = `rule.${rule.index}`;
      const ms = rule.timeoutMs!;
      delays[key] ??= ({ context }) => Math.max(0, ms - (now() - Math.max(context.enteredAt, context.ruleTimerBase[rule.index] ?? -Infinity)));
      after[key] = [
        { guard: { type: 'ruleTimerReady', params: { index: rule.index } }, target: 'exiting', actions: { type: 'takeRuleTimer', params: { index: rule.index } } },
        { target: 'active', reenter: true, actions: { type: 'restartRuleTimer', params: { index: rule.index } } },
      ];
    }
    modeStates[name] = {
      initial: 'entering',
      meta: { display_name: mode.display_name, timeout_seconds: mode.timeout_seconds },
      states: {
        entering: {
          invoke: {
            src: 'hookRunner',
            input: ({ context, self }: { context: ModeContext; self: AnyActorRef }) =>
              runInput('on_entry', name, { from_mode: context.previous ?? '', to_mode: name, reason: context.lastTransition?.reason ?? 'startup' }, self),
            onDone: [
              { guard: and(['aborted', 'starting']), target: '#modes.failed', actions: ['emitFailures', 'failStartup'] },
              { guard: and(['aborted', 'canRollback']), target: '#modes.route', actions: ['emitFailures', 'rollback'] },
              { target: 'active', actions: ['emitFailures', 'entered'] },
            ],
          },
        },
        active: {
          after,
          always: [
            { guard: 'dirtyContextRule', target: 'exiting', actions: ['clearDirty', 'takeContextRule'] },
            { guard: 'dirty', actions: 'clearDirty' },
          ],
          on: {
            'input.text': { guard: 'inputRule', target: 'exiting', actions: 'takeInputRule' },
            'context.update': [
              { guard: 'contextRuleAfterUpdate', target: 'exiting', actions: ['assignValues', 'takeContextRule'] },
              { actions: 'assignValues' },
            ],
            'mode.switch': [{ guard: 'manualAllowed', target: 'exiting', actions: 'takeManual' }, { actions: 'refuseManual' }],
          },
        },
        timingOut: {
          entry: 'emitTimeout',
          invoke: {
            src: 'hookRunner',
            input: ({ self }: { self: AnyActorRef }) => runInput('on_timeout', name, { from_mode: name, to_mode: name, reason: 'timeout' }, self),
            onDone: [
              { guard: 'timeoutRule', target: 'exiting', actions: ['emitFailures', 'takeTimeoutRule'] },
              { target: 'active', actions: ['emitFailures', 'restartModeTimer'] },
            ],
          },
        },
        exiting: {
          invoke: {
            src: 'hookRunner',
            input: ({ context, self }: { context: ModeContext; self: AnyActorRef }) =>
              runInput('on_exit', name, { from_mode: name, to_mode: context.pending?.to ?? '', reason: context.pending?.reason ?? '' }, self),
            onDone: { target: '#modes.route', actions: ['emitFailures', 'commitSwitch'] },
          },
        },
      },
    };
  }

  return m.createMachine({
    id: 'modes',
    initial: 'starting',
    context: ({ input }: { input: ModeMachineInput }) => initialContext(config, input, now()),
    output: ({ context }: { context: ModeContext }) => ({ ok: context.failure === null, reason: context.failure, mode: context.mode }),
    on: {
      'agent.shutdown': { target: '.stopping' },
      'mode.switch': { actions: 'refuseBusy' },
      'context.update': { actions: ['assignValues', 'markDirty'] },
      'hook.ran': { actions: 'emitHookRun' },
    },
    states: {
      starting: {
        entry: { type: 'emitWarnings', params: ({ event }: { event: unknown }) => ({ warnings: (event as { input?: ModeMachineInput }).input?.warnings ?? [] }) },
        invoke: {
          src: 'hookRunner',
          input: ({ context, self }: { context: ModeContext; self: AnyActorRef }) =>
            runInput('on_startup', context.mode, { from_mode: '', to_mode: context.mode, reason: 'startup' }, self),
          onDone: [
            { guard: 'aborted', target: 'failed', actions: ['emitFailures', 'failStartup'] },
            { target: 'route', actions: 'emitFailures' },
          ],
        },
      },
      route: {
        always: modeNames.map((mode) => ({ guard: { type: 'isMode', params: { mode } }, target: mode })),
      },
      ...(modeStates as object),
      stopping: {
        on: { 'agent.shutdown': {}, 'mode.switch': { actions: 'refuseBusy' } },
        invoke: { src: 'shutdownRunner', input: ({ context, self }: { context: ModeContext; self: AnyActorRef }) => ({ mode: context.mode, machine: self }), onDone: { target: 'stopped', actions: 'emitFailures' } },
      },
      stopped: { type: 'final', entry: 'abortAsyncHooks' },
      failed: { type: 'final', entry: 'abortAsyncHooks' },
    },
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
  } as any).provide({ delays: delays as any });
}

export type ModeMachine = ReturnType<typeof createModeMachine>;

/**
 * Creates (not starts) the mode actor of `config`: restores mode memory, uses `deps.clock` as the
 * actor's clock, registers as systemId `modes`, and cancels async hooks when the actor stops.
 */
export function createModeActor(config: AgentConfig, deps: ModeDeps = {}): Actor<ModeMachine> {
  const logger = deps.logger ?? log();
  const asyncHooks = new AsyncHooks();
  const store =
    deps.memory === false || !config.mode_memory_enabled
      ? undefined
      : (deps.memory ?? fileModeMemory(modeMemoryPath(deps.configName ?? config.name), (m) => logger.warn(m)));
  const machine = createModeMachine(config, { ...deps, memory: store ?? false }, asyncHooks);
  const actor = createActor(machine, { input: restoreInput(config, store), clock: deps.clock ?? realClock, systemId: 'modes' });
  actor.subscribe({ complete: () => asyncHooks.abortAll(), error: () => asyncHooks.abortAll() });
  return actor;
}
