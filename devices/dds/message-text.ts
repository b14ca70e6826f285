// A decoded ROS 2 message as prompt text: a compact rendering of its fields (constants by name, arrays shortened, bounded) or a template of {field.paths}.
import type { MessageDefinition, MessageDefinitionField } from '@foxglove/message-definition';
import { DdsError } from './addon.js';
import { dataFields, definitionOf, fieldAt } from './message-fields.js';
import type { RosCodec } from './types.js';

/** Items of an array shown before `… (N items)`. */
const ARRAY_ITEMS = 8;
/** Items of an array of messages shown. */
const MESSAGE_ITEMS = 3;
/** Longest string value shown, in characters. */
const STRING_CHARS = 200;
const BYTE_TYPES = new Set(['uint8', 'int8', 'byte', 'char']);

/** A number as a person reads it: 4 significant digits below 1000, whole above; NaN and infinities by name. */
export function shortNumber(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n)) return String(n);
  if (Math.abs(n) >= 1000) return String(Math.round(n));
  return String(Number(n.toPrecision(4)));
}

function shortString(s: string): string {
  return s.length > STRING_CHARS ? `${s.slice(0, STRING_CHARS)}…` : s;
}

/** The constant of `parent` that names `value` of field `field` (`POWER_SUPPLY_STATUS_DISCHARGING` for power_supply_status 2), without the field's prefix. */
function constantName(parent: MessageDefinition, field: MessageDefinitionField, value: unknown): string | undefined {
  const prefix = `${field.name.toUpperCase()}_`;
  const c = parent.definitions.find((d) => d.isConstant && d.name.startsWith(prefix) && d.value === value);
  return c ? c.name.slice(prefix.length) : undefined;
}

/** One primitive value: strings quoted (`quote`) or bare, times in seconds, numbers short, constants by name. */
function primitive(value: unknown, field: MessageDefinitionField, parent: MessageDefinition | undefined, quote: boolean): string {
  if (typeof value === 'string') return quote ? JSON.stringify(shortString(value)) : shortString(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') {
    const named = parent ? constantName(parent, field, value) : undefined;
    return named ?? shortNumber(value);
  }
  if (value && typeof value === 'object' && 'sec' in value) {
    const t = value as { sec: number; nanosec?: number; nsec?: number };
    return `${shortNumber(t.sec + (t.nanosec ?? t.nsec ?? 0) / 1e9)} s`;
  }
  return String(value);
}

/** A value of any field, rendered; `quote` puts strings in quotes (the whole-message rendering does, a template does not). */
function valueText(codec: RosCodec, value: unknown, field: MessageDefinitionField, parent: MessageDefinition | undefined, quote: boolean): string {
  if (field.isArray) {
    const items = ArrayBuffer.isView(value) ? Array.from(value as unknown as ArrayLike<number>) : Array.isArray(value) ? value : [];
    if (BYTE_TYPES.has(field.type) && !field.isComplex) return `<${items.length} bytes>`;
    const limit = field.isComplex ? MESSAGE_ITEMS : ARRAY_ITEMS;
    const one: MessageDefinitionField = { ...field, isArray: false };
    const shown = items.slice(0, limit).map((v) => valueText(codec, v, one, parent, quote));
    return `[${shown.join(', ')}${items.length > limit ? `, … (${items.length} items)` : ''}]`;
  }
  if (field.isComplex) {
    const def = definitionOf(codec, field.type);
    if (!def || value === null || typeof value !== 'object') return String(value);
    return `{${pairs(codec, value as Record<string, unknown>, def, '', quote, true).join(', ')}}`;
  }
  return primitive(value, field, parent, quote);
}

/** `name: value` for every data field of `def` (nested messages flattened as `a.b: v`); header stamps and empty values left out unless `all`. */
function pairs(codec: RosCodec, message: Record<string, unknown>, def: MessageDefinition, prefix: string, quote: boolean, all: boolean): string[] {
  const out: string[] = [];
  for (const f of dataFields(def)) {
    const value = message[f.name];
    const name = `${prefix}${f.name}`;
    if (!all && f.name === 'stamp' && (f.type === 'time' || f.type === 'builtin_interfaces/Time')) continue;
    if (!all && (value === '' || ((Array.isArray(value) || ArrayBuffer.isView(value)) && (value as ArrayLike<unknown>).length === 0))) continue;
    if (f.isComplex && !f.isArray) {
      const sub = definitionOf(codec, f.type);
      if (sub && value && typeof value === 'object') {
        out.push(...pairs(codec, value as Record<string, unknown>, sub, `${name}.`, quote, all));
        continue;
      }
    }
    out.push(`${name}: ${valueText(codec, value, f, def, quote)}`);
  }
  return out;
}

/** The value at `path` of a decoded message (undefined when a step is missing). */
function valueAt(message: Record<string, unknown>, path: readonly string[]): unknown {
  let v: unknown = message;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/** Cuts `text` to `max` characters, saying so. */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const mark = ' …[cut]';
  return `${text.slice(0, Math.max(0, max - mark.length))}${mark}`;
}

export interface MessageTextOptions {
  /** Field paths to show, in order; absent: every field but header stamps and empty values. */
  fields?: readonly string[] | undefined;
  /** `{path}`, `{topic}`, `{message}`; absent: `{message}`. */
  template?: string | undefined;
  /** The topic as the configuration names it (for `{topic}`). */
  topic: string;
  maxChars: number;
}

const PLACEHOLDER = /\{([A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z][A-Za-z0-9_]*)*)\}/g;

/**
 * Makes the renderer of one input: field paths of `fields` and the template's placeholders are looked
 * up once, here, so a path the type lacks is an error when the input starts (DdsError naming it), never
 * a silent empty value at every message.
 */
export function messageText(codec: RosCodec, options: MessageTextOptions): (message: Record<string, unknown>) => string {
  const chosen = options.fields?.map((p) => ({ p, found: fieldAt(codec, p) }));
  const whole = (message: Record<string, unknown>): string => {
    if (!chosen) return pairs(codec, message, codec.definitions[0]!, '', true, false).join(', ');
    return chosen.map(({ p, found }) => `${p}: ${valueText(codec, valueAt(message, found.path), found.field, found.parent, true)}`).join(', ');
  };
  if (!options.template) return (message) => bounded(whole(message), options.maxChars);
  const template = options.template;
  const slots = new Map<string, ReturnType<typeof fieldAt>>();
  for (const [, path] of template.matchAll(PLACEHOLDER)) {
    if (path === 'topic' || path === 'message' || slots.has(path!)) continue;
    try {
      slots.set(path!, fieldAt(codec, path!));
    } catch (err) {
      throw new DdsError('dds_type', `template {${path}}: ${(err as Error).message}`, { cause: err });
    }
  }
  return (message) =>
    bounded(
      template.replace(PLACEHOLDER, (_, path: string) => {
        if (path === 'topic') return options.topic;
        if (path === 'message') return whole(message);
        const found = slots.get(path)!;
        return valueText(codec, valueAt(message, found.path), found.field, found.parent, false);
      }),
      options.maxChars,
    );
}
