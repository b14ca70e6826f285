// The mode machine's context and the pure steps that change it: pending switches, commits, rollbacks, restore.
import type { AgentConfig } from '../../src/config/schema.js';
import { MEMORY_TRANSITIONS, type ModeMemory, type ModeMemoryStore, type TransitionRecord } from '../../src/modes/memory.js';
import type { CompiledRule, RuleChoice } from '../../src/modes/rules.js';

/** A switch chosen but not yet committed (exit hooks of the old mode are running). */
export interface PendingSwitch {
  from: string;
  to: string;
  rule_index: number | null;
  trigger: string;
  reason: string;
}

export interface ModeContext {
  /** The mode the agent is in (changes between the exit hooks of the old and the entry hooks of the new mode). */
  mode: string;
  previous: string | null;
  lastTransition: TransitionRecord | null;
  /** The last transitions, oldest first (at most MEMORY_TRANSITIONS). */
  transitions: TransitionRecord[];
  /** Clock ms at which each rule (by index) last fired: the cooldown reference. */
  lastFired: Record<number, number>;
  /** Context values for context_aware rules, set by `context.update`. */
  values: Record<string, unknown>;
  /** A context.update arrived while hooks were running: evaluate context rules once the mode is active. */
  contextDirty: boolean;
  pending: PendingSwitch | null;
  /** Clock ms of the switch into the current mode. */
  enteredAt: number;
  /** Clock ms from which the mode's timeout counts (reset when the timer restarts). */
  modeTimerBase: number;
  /** Clock ms from which each rule timer counts when it was restarted in this mode. */
  ruleTimerBase: Record<number, number>;
  /** True while entering during start-up: an abort there fails the start-up. */
  starting: boolean;
  /** True while re-entering the previous mode after an aborted switch: an abort there only logs. */
  rollingBack: boolean;
  /** Why the start-up failed, when it did. */
  failure: string | null;
  /** Async hooks started so far: numbers their actors (`hook:on_entry:message#3`). */
  asyncHooks: number;
}

/** Input of the mode machine: what mode memory restored, if anything. */
export interface ModeMachineInput {
  initialMode?: string;
  previous?: string | null;
  transitions?: TransitionRecord[];
  /** Warnings found while restoring (emitted as `memory.warning` when the machine starts). */
  warnings?: string[];
}

export function initialContext(config: AgentConfig, input: ModeMachineInput | undefined, now: number): ModeContext {
  const mode = input?.initialMode && Object.hasOwn(config.modes, input.initialMode) ? input.initialMode : config.default_mode;
  const transitions = (input?.transitions ?? []).slice(-MEMORY_TRANSITIONS);
  return {
    mode,
    previous: input?.previous ?? null,
    lastTransition: transitions.at(-1) ?? null,
    transitions,
    lastFired: {},
    values: {},
    contextDirty: false,
    pending: null,
    enteredAt: now,
    modeTimerBase: now,
    ruleTimerBase: {},
    starting: true,
    rollingBack: false,
    failure: null,
    asyncHooks: 0,
  };
}

/** The pending switch for a chosen rule; the rule's cooldown starts now. */
export function takeRule(context: ModeContext, choice: RuleChoice, now: number): Partial<ModeContext> {
  return {
    pending: {
      from: context.mode,
      to: choice.rule.rule.to_mode,
      rule_index: choice.rule.index,
      trigger: choice.rule.rule.transition_type,
      reason: choice.reason,
    },
    lastFired: { ...context.lastFired, [choice.rule.index]: now },
  };
}

/** The pending switch for a manual request (rule null when the config has no manual rules). */
export function takeManual(context: ModeContext, to: string, rule: CompiledRule | null, reason: string | undefined, now: number): Partial<ModeContext> {
  return {
    pending: { from: context.mode, to, rule_index: rule?.index ?? null, trigger: 'manual', reason: reason ? `manual: ${reason}` : 'manual' },
    lastFired: rule ? { ...context.lastFired, [rule.index]: now } : context.lastFired,
  };
}

/** The state change of a switch: the agent is now in `pending.to`. */
export function commit(context: ModeContext, pending: PendingSwitch, now: number): Partial<ModeContext> {
  const record: TransitionRecord = { ...pending, at: now };
  return {
    mode: pending.to,
    previous: pending.from,
    lastTransition: record,
    transitions: [...context.transitions, record].slice(-MEMORY_TRANSITIONS),
    pending: null,
    enteredAt: now,
    modeTimerBase: now,
    ruleTimerBase: {},
  };
}

/** What mode memory stores after a switch. */
export function memoryOf(configName: string, context: ModeContext): ModeMemory {
  return { version: 1, config: configName, current: context.mode, previous: context.previous, transitions: context.transitions };
}

/** Reads mode memory for a machine's input; a saved mode that no longer exists is reported and ignored. */
export function restoreInput(config: AgentConfig, store: ModeMemoryStore | undefined): ModeMachineInput {
  if (!config.mode_memory_enabled || !store) return {};
  const read = store.load();
  const warnings = read.warning ? [read.warning] : [];
  const memory = read.memory;
  if (!memory) return { warnings };
  if (!Object.hasOwn(config.modes, memory.current)) {
    warnings.push(`saved mode "${memory.current}" no longer exists; starting in "${config.default_mode}"`);
    return { warnings };
  }
  const previous = memory.previous && Object.hasOwn(config.modes, memory.previous) ? memory.previous : null;
  return { initialMode: memory.current, previous, transitions: memory.transitions, warnings };
}
