// The state nodes of one mode of the mode machine (start-up, entering, running, timing out, shutting down, exiting) and its timers, as named builders.
import { and, sendTo } from 'xstate';
import type { AgentConfig } from '../../src/config/schema.js';
import { ruleTimers, type CompiledRule } from '../../src/modes/rules.js';
import type { ModeContext } from './context.js';
import type { HookEnv, HookVars } from './types.js';

/** The input of a `hookSequence` run: the hooks of one type of a mode, their variables and environment. */
export type RunInput = (
  hooks: HookVars['hook_type'],
  mode: string,
  vars: Omit<HookVars, 'hook_type' | 'mode_name'>,
) => { hooks: unknown; vars: HookVars; env: HookEnv };

/** What every mode's states are built from. */
export interface ModeStateKit {
  config: AgentConfig;
  rules: readonly CompiledRule[];
  now: () => number;
  runInput: RunInput;
  /** Names of the mode actors the machine invokes (`mode:<name>`), when the agent gives them. */
  modeActors: ReadonlySet<string>;
}

/** A delay read from the machine's context when its timer starts (XState `delays`). */
export type Delay = (args: { context: ModeContext }) => number;

/**
 * The mode's timers: its own timeout (to `timingOut`) and the time_based rules that leave it, each
 * on its own delay measured from entry or the rule's last restart. `exiting` is the id of the mode's
 * exiting state. Adds the delays it uses to `delays` (one per rule, shared by the modes it applies to).
 */
export function modeTimers(kit: ModeStateKit, name: string, exiting: string, delays: Record<string, Delay>): Record<string, unknown> {
  const mode = kit.config.modes[name]!;
  const after: Record<string, unknown> = {};
  if (mode.timeout_seconds !== undefined) {
    const ms = mode.timeout_seconds * 1000;
    delays[`timeout.${name}`] = ({ context }) => Math.max(0, ms - (kit.now() - context.modeTimerBase));
    after[`timeout.${name}`] = { target: 'timingOut' };
  }
  for (const rule of ruleTimers(kit.rules, name)) {
    const key = `rule.${rule.index}`;
    const ms = rule.timeoutMs!;
    delays[key] ??= ({ context }) => Math.max(0, ms - (kit.now() - Math.max(context.enteredAt, context.ruleTimerBase[rule.index] ?? -Infinity)));
    after[key] = [
      {
        guard: { type: 'ruleTimerReady', params: { index: rule.index } },
        target: exiting,
        actions: { type: 'takeRuleTimer', params: { index: rule.index } },
      },
      { target: 'active', reenter: true, actions: { type: 'restartRuleTimer', params: { index: rule.index } } },
    ];
  }
  return after;
}

/** Start-up of the agent in this mode: on_startup hooks run with the mode's actions available; an abort fails the start. */
function startupState(kit: ModeStateKit, name: string, i: number) {
  return {
    id: `modes-${i}-startup`,
    tags: ['starting'],
    invoke: {
      id: 'hooks:on_startup',
      src: 'hookSequence',
      input: () => kit.runInput('on_startup', name, { from_mode: '', to_mode: name, reason: 'startup' }),
      onDone: [
        { guard: 'aborted', target: '#modes.failed', actions: ['emitFailures', 'failStartup'] },
        { target: 'entering', actions: 'emitFailures' },
      ],
    },
  };
}

/** on_entry hooks; an abort fails the start-up, or rolls back to the previous mode once. */
function enteringState(kit: ModeStateKit, name: string) {
  return {
    tags: ['entering'],
    invoke: {
      id: 'hooks:on_entry',
      src: 'hookSequence',
      input: ({ context }: { context: ModeContext }) =>
        kit.runInput('on_entry', name, { from_mode: context.previous ?? '', to_mode: name, reason: context.lastTransition?.reason ?? 'startup' }),
      onDone: [
        { guard: and(['aborted', 'starting']), target: '#modes.failed', actions: ['emitFailures', 'failStartup'] },
        { guard: and(['aborted', 'canRollback']), target: '#modes.route', actions: ['emitFailures', 'rollback'] },
        { target: 'running', actions: ['emitFailures', 'entered'] },
      ],
    },
  };
}

/**
 * The mode runs: `active` takes input text, context updates and manual switches (each may leave by a
 * rule to `exiting`), its timers run; `timingOut` runs on_timeout hooks. The mode actor is told
 * `mode.run` on entry and `mode.standby` on exit.
 */
function runningState(kit: ModeStateKit, name: string, actorId: string | undefined, after: Record<string, unknown>, exiting: string) {
  return {
    tags: ['running'],
    ...(actorId ? { entry: sendTo(actorId, { type: 'mode.run' }), exit: [sendTo(actorId, { type: 'mode.standby' }), 'emitLeft'] } : { exit: 'emitLeft' }),
    initial: 'active',
    states: {
      active: {
        tags: ['active'],
        after,
        always: [
          { guard: 'dirtyContextRule', target: exiting, actions: ['clearDirty', 'takeContextRule'] },
          { guard: 'dirty', actions: 'clearDirty' },
        ],
        on: {
          'input.text': [
            { guard: 'inputRule', target: exiting, actions: ['takeInputRule', { type: 'answerKeywords', params: { fired: true } }] },
            { actions: { type: 'answerKeywords', params: { fired: false } } },
          ],
          'context.update': [
            { guard: 'contextRuleAfterUpdate', target: exiting, actions: ['assignValues', 'tellGovernor', 'takeContextRule'] },
            { actions: ['assignValues', 'tellGovernor'] },
          ],
          'mode.switch': [{ guard: 'manualAllowed', target: exiting, actions: 'takeManual' }, { actions: 'refuseManual' }],
        },
      },
      timingOut: {
        tags: ['timingOut'],
        entry: 'emitTimeout',
        invoke: {
          id: 'hooks:on_timeout',
          src: 'hookSequence',
          input: () => kit.runInput('on_timeout', name, { from_mode: name, to_mode: name, reason: 'timeout' }),
          onDone: [
            { guard: 'timeoutRule', target: exiting, actions: ['emitFailures', 'takeTimeoutRule'] },
            { target: 'active', actions: ['emitFailures', 'restartModeTimer'] },
          ],
        },
      },
    },
  };
}

/** Shutdown in a mode: its actions (and so its actor) live on while on_exit, then on_shutdown hooks run. */
function shuttingDownState(kit: ModeStateKit) {
  const hooks = (type: 'on_exit' | 'on_shutdown') => ({
    id: `hooks:${type}`,
    src: 'hookSequence',
    input: ({ context }: { context: ModeContext }) => kit.runInput(type, context.mode, { from_mode: context.mode, to_mode: '', reason: 'shutdown' }),
  });
  return {
    tags: ['stopping'],
    on: { 'agent.shutdown': {}, 'mode.switch': { actions: 'refuseBusy' } },
    initial: 'exit',
    states: {
      exit: { invoke: { ...hooks('on_exit'), onDone: { target: 'down', actions: 'emitFailures' } } },
      down: { invoke: { ...hooks('on_shutdown'), onDone: { target: '#modes.stopped', actions: 'emitFailures' } } },
    },
  };
}

/** on_exit hooks of a switch, then the switch is committed and the machine routes to the next mode. */
function exitingState(kit: ModeStateKit, name: string, exiting: string) {
  return {
    id: exiting.slice(1),
    tags: ['exiting'],
    invoke: {
      id: 'hooks:on_exit',
      src: 'hookSequence',
      input: ({ context }: { context: ModeContext }) =>
        kit.runInput('on_exit', name, { from_mode: name, to_mode: context.pending?.to ?? '', reason: context.pending?.reason ?? '' }),
      onDone: { target: '#modes.route', actions: ['emitFailures', 'commitSwitch'] },
    },
  };
}

/** The state of mode `name` (the `i`th of the configuration): start-up, entering, running, shutting down, exiting. */
export function modeState(kit: ModeStateKit, name: string, i: number, delays: Record<string, Delay>) {
  const mode = kit.config.modes[name]!;
  // State ids let transitions inside `running` name the sibling `exiting` whatever the mode is called.
  const exiting = `#modes-${i}-exiting`;
  const actorId = kit.modeActors.has(`mode:${name}`) ? `mode:${name}` : undefined;
  return {
    initial: 'entering',
    on: { 'agent.shutdown': '.shuttingDown' },
    meta: { display_name: mode.display_name, timeout_seconds: mode.timeout_seconds },
    // Its system id lets the agent and hooks address it (`system.get('mode:<name>')`) without walking the tree.
    ...(actorId ? { invoke: { id: actorId, systemId: actorId, src: actorId } } : {}),
    states: {
      startup: startupState(kit, name, i),
      entering: enteringState(kit, name),
      running: runningState(kit, name, actorId, modeTimers(kit, name, exiting, delays), exiting),
      shuttingDown: shuttingDownState(kit),
      exiting: exitingState(kit, name, exiting),
    },
  };
}
