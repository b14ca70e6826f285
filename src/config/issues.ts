// Turns zod issues into the one-line problems of `cortexd check`, and finds unknown fields to warn about.
import type { z } from 'zod';
import { formatPath } from './env.js';
import { isSecretField } from '../redact.js';
import { closest, didYouMean } from '../plugins/suggest.js';

/**
 * A short, quoted rendering of a bad value for messages: `"fast"`, `12`, `an object`. loadConfig
 * passes every message through conceal.ts, which replaces values from variables and key-shaped strings.
 */
export function describeValue(value: unknown): string {
  return describeShown(value);
}

function describeShown(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const s = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return JSON.stringify(s);
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  return 'an object';
}

/**
 * A bad value of a secret field (`api_key`, `token`, `password`...) as a message may show it: its kind
 * only (`a number`, `a string`), never its text or digits, whatever the field's schema complains about.
 */
export function describeSecret(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return `${ARTICLE[typeof value] ?? 'a value'} (not shown: a secret field)`;
}

const ARTICLE: Record<string, string> = {
  number: 'a number',
  int: 'an integer',
  string: 'a string',
  boolean: 'a boolean (true or false)',
  array: 'a list',
  object: 'an object',
  record: 'an object',
};

export interface PathMessage {
  path: Array<PropertyKey>;
  message: string;
}

/** Messages such as `expected a number, got "fast"` or `missing (required)`. */
export function zodIssueMessages(error: z.ZodError, prefix: Array<PropertyKey> = []): PathMessage[] {
  const out: PathMessage[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    const input = (issue as { input?: unknown }).input;
    const secret = path.some((p) => typeof p === 'string' && isSecretField(p));
    const describeValue = secret ? describeSecret : describeShown;
    let message: string;
    switch (issue.code) {
      case 'invalid_type': {
        const expected = ARTICLE[issue.expected] ?? issue.expected;
        message = input === undefined ? `missing (required: ${expected})` : `expected ${expected}, got ${describeValue(input)}`;
        break;
      }
      case 'invalid_value':
        message = `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${describeValue(input)}${typeof input === 'string' ? didYouMean(input, issue.values.map(String)) : ''}`;
        break;
      case 'too_small':
      case 'too_big':
        message =
          issue.message.startsWith('Too') || issue.message.startsWith('Invalid')
            ? `${issue.message.toLowerCase()}, got ${describeValue(input)}`
            : `${issue.message}, got ${describeValue(input)}`;
        break;
      case 'invalid_union': {
        // A discriminated union (a device's `binding`): the value is the discriminator's, and its options are the valid values.
        const u = issue as { discriminator?: string; options?: unknown[] };
        if (u.discriminator && Array.isArray(u.options)) {
          const given = input && typeof input === 'object' ? (input as Record<string, unknown>)[u.discriminator] : input;
          const names = u.options.map(String);
          const hint = typeof given === 'string' ? didYouMean(given, names) : '';
          message = `${describeValue(given)} is not a valid ${u.discriminator}; valid: ${u.options.map((v) => JSON.stringify(v)).join(', ')}${hint}`;
          if (path[path.length - 1] !== u.discriminator) path.push(u.discriminator);
        } else {
          message = `not a valid value: got ${describeValue(input)}`;
        }
        break;
      }
      case 'unrecognized_keys':
        message = `unknown field(s) ${issue.keys.join(', ')}`;
        break;
      default:
        message = issue.message;
    }
    out.push({ path, message });
  }
  return out;
}

/**
 * Objects whose extra fields belong to someone else (a plugin's `config`): the core schema types the
 * fields it knows, and the plugin's own schema reports the rest.
 */
const OPEN_OBJECTS = new WeakSet<object>();
export function openObject<T extends z.ZodType>(schema: T): T {
  OPEN_OBJECTS.add(schema);
  return schema;
}

interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  element?: z.ZodType;
  innerType?: z.ZodType;
  valueType?: z.ZodType;
  in?: z.ZodType;
  catchall?: z.ZodType;
}

function defOf(schema: z.ZodType): Def {
  return (schema as unknown as { _zod: { def: Def } })._zod.def;
}

/** A field nothing carries out: its JSON path, and the field of the same object it most likely meant (a typo). */
export interface UnknownField {
  path: string;
  /** The known field closest to it (`system_prompt_base` for `system_prompt_bse`), when one is close enough. */
  suggestion?: string;
}

/**
 * Lists fields present in `value` that `schema` does not name, with the likely meant field. The schemas
 * are loose (unknown fields are kept), so this is how they become problems instead of silent passengers.
 * Records (plugin `config` blocks, env, headers) are open by design and not reported here.
 */
export function unknownFields(schema: z.ZodType, value: unknown, path: Array<PropertyKey> = [], out: UnknownField[] = []): UnknownField[] {
  if (OPEN_OBJECTS.has(schema)) return out;
  const def = defOf(schema);
  switch (def.type) {
    case 'optional':
    case 'default':
    case 'nullable':
    case 'prefault':
    case 'readonly':
    case 'catch':
      if (def.innerType) unknownFields(def.innerType, value, path, out);
      break;
    case 'pipe':
      if (def.in) unknownFields(def.in, value, path, out);
      break;
    case 'array':
      if (Array.isArray(value) && def.element) value.forEach((v, i) => unknownFields(def.element!, v, [...path, i], out));
      break;
    case 'record':
      if (value && typeof value === 'object' && !Array.isArray(value) && def.valueType && defOf(def.valueType).type !== 'unknown') {
        for (const [k, v] of Object.entries(value)) unknownFields(def.valueType, v, [...path, k], out);
      }
      break;
    case 'object':
      if (value && typeof value === 'object' && !Array.isArray(value) && def.shape) {
        // A typo is for a field the object lacks: one it already has is not what was meant.
        const absent = Object.keys(def.shape).filter((k) => !Object.hasOwn(value, k));
        for (const [k, v] of Object.entries(value)) {
          const field = def.shape[k];
          if (field) unknownFields(field, v, [...path, k], out);
          else {
            // A field the object lacks may be further off (`asr_url` for `asr_ws_url`) than one taken at random.
            const suggestion = closest(k, absent, Math.floor(k.length / 2)) ?? closest(k, Object.keys(def.shape));
            out.push({ path: formatPath([...path, k]), ...(suggestion ? { suggestion } : {}) });
          }
        }
      }
      break;
    default:
      break;
  }
  return out;
}
