// Evaluation of context_aware rules' context_conditions against the agent's context values.
import type { ContextConditionConfig } from '../config/schema.js';
import { normaliseText } from './keywords.js';

/**
 * Semantics of one condition `key: condition` against `context[key]` (cortexd's decisions):
 * - a string, number or boolean: strict equality (no coercion: `1` does not equal `"1"`);
 * - `null`: the key is absent, or its value is null;
 * - a list: the value equals one of the list's items (same as `{ one_of: [...] }`);
 * - `{ min, max }`: the value is a finite number within the inclusive bounds given;
 * - `{ contains: x }`: the value is a string containing x (case- and accent-insensitive, as keyword
 *   matching), or a list with an item equal to x;
 * - `{ one_of: [...] }`: the value equals one of the items;
 * - `{ not: c }`: c (any condition form above) does not hold; an absent key satisfies `{not: ...}`
 *   unless c itself accepts an absent key.
 * Several operators in one object must all hold. All keys of `context_conditions` must hold.
 * Item equality compares primitives strictly and objects/lists by their JSON form.
 */
export function conditionHolds(condition: unknown, value: unknown, present: boolean): boolean {
  if (condition === null) return !present || value === null;
  if (typeof condition === 'string' || typeof condition === 'number' || typeof condition === 'boolean') {
    return present && value === condition;
  }
  if (Array.isArray(condition)) return present && condition.some((item) => sameValue(item, value));
  if (typeof condition === 'object') {
    const ops = condition as Record<string, unknown>;
    let any = false;
    if ('min' in ops || 'max' in ops) {
      any = true;
      if (typeof value !== 'number' || !Number.isFinite(value)) return false;
      if (typeof ops.min === 'number' && value < ops.min) return false;
      if (typeof ops.max === 'number' && value > ops.max) return false;
    }
    if ('contains' in ops) {
      any = true;
      if (!containsHolds(ops.contains, value)) return false;
    }
    if ('one_of' in ops) {
      any = true;
      if (!present || !Array.isArray(ops.one_of) || !ops.one_of.some((item) => sameValue(item, value))) return false;
    }
    if ('not' in ops) {
      any = true;
      if (conditionHolds(ops.not, value, present)) return false;
    }
    return any;
  }
  return false;
}

function containsHolds(needle: unknown, value: unknown): boolean {
  if (typeof value === 'string' && (typeof needle === 'string' || typeof needle === 'number')) {
    return normaliseText(value).includes(normaliseText(String(needle)));
  }
  if (Array.isArray(value)) return value.some((item) => sameValue(item, needle));
  return false;
}

function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a && b && typeof a === 'object' && typeof b === 'object') {
    try {
      return JSON.stringify(a) === JSON.stringify(b);
    } catch {
      return false;
    }
  }
  return false;
}

/** True when every condition of `conditions` holds in `context`. An empty set never holds. */
export function conditionsHold(conditions: Record<string, ContextConditionConfig> | undefined, context: Readonly<Record<string, unknown>>): boolean {
  if (!conditions) return false;
  const entries = Object.entries(conditions);
  if (entries.length === 0) return false;
  return entries.every(([key, cond]) => conditionHolds(cond, context[key], Object.hasOwn(context, key)));
}

/** Human-readable form of a condition set, for graph labels and transition reasons. */
export function describeConditions(conditions: Record<string, ContextConditionConfig> | undefined): string {
  if (!conditions) return '';
  return Object.entries(conditions)
    .map(([key, cond]) => `${key} ${describeCondition(cond)}`)
    .join(' and ');
}

function describeCondition(cond: unknown): string {
  if (Array.isArray(cond)) return `in ${JSON.stringify(cond)}`;
  if (cond && typeof cond === 'object') {
    const ops = cond as Record<string, unknown>;
    const parts: string[] = [];
    if (typeof ops.min === 'number') parts.push(`>= ${ops.min}`);
    if (typeof ops.max === 'number') parts.push(`<= ${ops.max}`);
    if ('contains' in ops) parts.push(`contains ${JSON.stringify(ops.contains)}`);
    if ('one_of' in ops) parts.push(`in ${JSON.stringify(ops.one_of)}`);
    if ('not' in ops) parts.push(`not ${describeCondition(ops.not)}`);
    return parts.join(' and ');
  }
  return `= ${JSON.stringify(cond)}`;
}
