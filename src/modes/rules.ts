// Pure selection of the transition rule that fires: applicability, cooldown, priority and ties.
import type { AgentConfig, RuleConfig } from '../config/schema.js';
import { compileKeyword, matchesWords, words, type CompiledKeyword } from './keywords.js';
import { conditionsHold, describeConditions } from './conditions.js';

/** A rule prepared once per configuration; `index` is its position in `transition_rules`. */
export interface CompiledRule {
  index: number;
  rule: RuleConfig;
  keywords: CompiledKeyword[];
  /** cooldown_seconds in ms (0 when absent). */
  cooldownMs: number;
  /** time_based only: the rule's own timeout_seconds in ms, when set. */
  timeoutMs?: number;
}

/** The rule chosen to fire and why, for the transition record. */
export interface RuleChoice {
  rule: CompiledRule;
  reason: string;
}

/** When each rule (by index) last fired, in clock milliseconds. Kept per rule, also for `*` rules. */
export type LastFired = Readonly<Record<number, number>>;

export function compileRules(config: Pick<AgentConfig, 'transition_rules'>): CompiledRule[] {
  return config.transition_rules.map((rule, index) => {
    const compiled: CompiledRule = {
      index,
      rule,
      keywords: rule.trigger_keywords.map(compileKeyword),
      cooldownMs: Math.round((rule.cooldown_seconds ?? 0) * 1000),
    };
    if (rule.timeout_seconds !== undefined) compiled.timeoutMs = Math.round(rule.timeout_seconds * 1000);
    return compiled;
  });
}

/**
 * A rule applies in `mode` when its from_mode is that mode or `*`. A rule never fires towards the
 * mode the agent is already in: a `*` rule pointing at the current mode is skipped (it is not a
 * switch), so it neither consumes its cooldown nor hides lower-priority rules.
 */
export function appliesIn(rule: CompiledRule, mode: string): boolean {
  return (rule.rule.from_mode === mode || rule.rule.from_mode === '*') && rule.rule.to_mode !== mode;
}

/** True while the rule's cooldown, started when it last fired, has not elapsed. */
export function coolingDown(rule: CompiledRule, lastFired: LastFired, now: number): boolean {
  const at = lastFired[rule.index];
  return at !== undefined && rule.cooldownMs > 0 && now - at < rule.cooldownMs;
}

/** Highest priority wins; among equal priorities the rule listed first wins. */
export function pick(choices: RuleChoice[]): RuleChoice | undefined {
  let best: RuleChoice | undefined;
  for (const c of choices) {
    if (!best || c.rule.rule.priority > best.rule.rule.priority) best = c;
    else if (c.rule.rule.priority === best.rule.rule.priority && c.rule.index < best.rule.index) best = c;
  }
  return best;
}

function eligible(rules: readonly CompiledRule[], mode: string, type: RuleConfig['transition_type'], lastFired: LastFired, now: number) {
  return rules.filter((r) => r.rule.transition_type === type && appliesIn(r, mode) && !coolingDown(r, lastFired, now));
}

/** The input_triggered rule that fires for `text` in `mode`, if any. Rules in cooldown do not match. */
export function selectInputRule(rules: readonly CompiledRule[], mode: string, text: string, lastFired: LastFired, now: number): RuleChoice | undefined {
  const textWords = words(text);
  if (textWords.length === 0) return undefined;
  const choices: RuleChoice[] = [];
  for (const rule of eligible(rules, mode, 'input_triggered', lastFired, now)) {
    const hit = rule.keywords.find((k) => matchesWords(textWords, k));
    if (hit) choices.push({ rule, reason: `keyword "${hit.keyword}"` });
  }
  return pick(choices);
}

/** The context_aware rule whose conditions all hold in `values`, if any. */
export function selectContextRule(
  rules: readonly CompiledRule[],
  mode: string,
  values: Readonly<Record<string, unknown>>,
  lastFired: LastFired,
  now: number,
): RuleChoice | undefined {
  const choices = eligible(rules, mode, 'context_aware', lastFired, now)
    .filter((r) => conditionsHold(r.rule.context_conditions, values))
    .map((rule) => ({ rule, reason: `context ${describeConditions(rule.rule.context_conditions)}` }));
  return pick(choices);
}

/**
 * The time_based rule that fires when the mode's own timeout_seconds elapse: rules of this mode or
 * `*` without their own timeout_seconds (those run on their own timers, see `ruleTimers`).
 */
export function selectTimeoutRule(rules: readonly CompiledRule[], mode: string, lastFired: LastFired, now: number): RuleChoice | undefined {
  const choices = eligible(rules, mode, 'time_based', lastFired, now)
    .filter((r) => r.timeoutMs === undefined)
    .map((rule) => ({ rule, reason: 'mode timeout' }));
  return pick(choices);
}

/** time_based rules of `mode` (or `*`) that carry their own timeout_seconds: each gets a timer. */
export function ruleTimers(rules: readonly CompiledRule[], mode: string): CompiledRule[] {
  return rules.filter((r) => r.rule.transition_type === 'time_based' && r.timeoutMs !== undefined && appliesIn(r, mode));
}

/** True when the configuration restricts manual switches to its `manual` rules. */
export function hasManualRules(rules: readonly CompiledRule[]): boolean {
  return rules.some((r) => r.rule.transition_type === 'manual');
}

/** Outcome of a manual switch request: the rule that allows it (null when unrestricted) or a refusal. */
export type ManualDecision = { ok: true; rule: CompiledRule | null } | { ok: false; reason: string };

/**
 * Manual switching: refused when `allow_manual_switching` is false, when the mode is unknown or
 * current. When the configuration has `manual` rules, a manual switch must match one of them (from
 * the current mode or `*`, to the requested mode, out of cooldown; the highest priority applies);
 * without any `manual` rule every mode is reachable by hand.
 */
export function decideManual(
  config: Pick<AgentConfig, 'allow_manual_switching' | 'modes'>,
  rules: readonly CompiledRule[],
  current: string,
  requested: string,
  lastFired: LastFired,
  now: number,
): ManualDecision {
  if (!config.allow_manual_switching) return { ok: false, reason: 'manual mode switching is disabled (allow_manual_switching is false)' };
  if (!Object.hasOwn(config.modes, requested)) {
    return { ok: false, reason: `unknown mode "${requested}" (modes: ${Object.keys(config.modes).join(', ')})` };
  }
  if (requested === current) return { ok: false, reason: `already in mode "${requested}"` };
  if (!hasManualRules(rules)) return { ok: true, rule: null };
  const candidates = rules.filter((r) => r.rule.transition_type === 'manual' && appliesIn(r, current) && r.rule.to_mode === requested);
  if (candidates.length === 0) return { ok: false, reason: `no manual rule allows "${current}" -> "${requested}"` };
  const ready = candidates.filter((r) => !coolingDown(r, lastFired, now));
  const chosen = pick(ready.map((rule) => ({ rule, reason: 'manual' })));
  if (!chosen) return { ok: false, reason: `the manual rule "${current}" -> "${requested}" is cooling down` };
  return { ok: true, rule: chosen.rule };
}
