// Fields of a ROS 2 message type by dotted path: looked up in its definition, checked against what a configuration puts in them, and set to build a message.
import type { MessageDefinition, MessageDefinitionField } from '@foxglove/message-definition';
import { DdsError } from './addon.js';
import type { RosCodec } from './types.js';

/** Integer field types and their ranges (int64 and uint64 as far as a JavaScript number is exact). */
export const INTEGER_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  int8: [-128, 127],
  uint8: [0, 255],
  byte: [0, 255],
  char: [0, 255],
  int16: [-32768, 32767],
  uint16: [0, 65535],
  int32: [-2147483648, 2147483647],
  uint32: [0, 4294967295],
  int64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
  uint64: [0, Number.MAX_SAFE_INTEGER],
};
const FLOATS = new Set(['float32', 'float64']);
const STRINGS = new Set(['string', 'wstring']);

/** What a primitive field holds, as a configuration speaks of it. */
export type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'time' | 'other';

export function kindOf(type: string): FieldKind {
  if (STRINGS.has(type)) return 'string';
  if (type in INTEGER_RANGES) return 'integer';
  if (FLOATS.has(type)) return 'number';
  if (type === 'bool') return 'boolean';
  if (type === 'time' || type === 'duration') return 'time';
  return 'other';
}

/** One field found by path: its definition, and the definition that holds it (for its constants). */
export interface FoundField {
  path: string[];
  field: MessageDefinitionField;
  parent: MessageDefinition;
}

/** The fields of a definition that carry data (not constants). */
export function dataFields(def: MessageDefinition): MessageDefinitionField[] {
  return def.definitions.filter((f) => !f.isConstant);
}

/** The definition of complex type `type` among `codec`'s definitions. */
export function definitionOf(codec: RosCodec, type: string): MessageDefinition | undefined {
  return codec.definitions.find((d) => d.name === type);
}

/** The field at `path` (`pose.pose.position.x`) of `codec`'s type; throws DdsError naming the type, the path and the fields there are. */
export function fieldAt(codec: RosCodec, path: string): FoundField {
  const parts = path.split('.');
  let def = codec.definitions[0]!;
  for (let i = 0; i < parts.length; i++) {
    const name = parts[i]!;
    const field = dataFields(def).find((f) => f.name === name);
    const where = parts.slice(0, i).join('.');
    if (!field) {
      const names = dataFields(def).map((f) => f.name);
      const fields = `fields: ${names.join(', ') || 'none'}`;
      throw new DdsError('dds_type', `${codec.rosType} has no field "${path}" (${where ? `${where} is a ${def.name}; its ${fields}` : `its ${fields}`})`);
    }
    if (i === parts.length - 1) return { path: parts, field, parent: def };
    if (!field.isComplex || field.isArray) {
      throw new DdsError(
        'dds_type',
        `${codec.rosType}: "${parts.slice(0, i + 1).join('.')}" is a ${field.type}${field.isArray ? ' array' : ''}, so "${path}" names nothing in it`,
      );
    }
    const next = definitionOf(codec, field.type);
    if (!next) throw new DdsError('dds_type', `${codec.rosType} uses ${field.type}, which has no definition here`);
    def = next;
  }
  throw new DdsError('dds_type', `${codec.rosType}: an empty field path`);
}

/** What an argument of a publishing action declares (src/plugins/schemas/ros2.ts's Ros2ArgSpec, the part checked here). */
export interface ArgDeclaration {
  type: 'string' | 'number' | 'integer' | 'boolean';
  min?: number | undefined;
  max?: number | undefined;
  values?: Array<string | number> | undefined;
}

/**
 * Checks that argument `name` (declared `arg`) can fill the field at `path`: a primitive, not an array,
 * of a kind that takes it (an integer field takes `integer` within the type's range; a float field
 * `number` or `integer`). Throws DdsError saying what to change.
 */
export function checkArgField(codec: RosCodec, name: string, path: string, arg: ArgDeclaration): FoundField {
  const found = fieldAt(codec, path);
  const f = found.field;
  const at = `argument ${name} (field ${path} of ${codec.rosType}, a ${f.type}${f.isArray ? ' array' : ''})`;
  if (f.isArray || f.isComplex)
    throw new DdsError('dds_type', `${at}: only single primitive fields take an argument; name one of its fields, or set it in fixed`);
  const kind = kindOf(f.type);
  const ok =
    (kind === 'string' && arg.type === 'string') ||
    (kind === 'boolean' && arg.type === 'boolean') ||
    (kind === 'integer' && arg.type === 'integer') ||
    (kind === 'number' && (arg.type === 'number' || arg.type === 'integer'));
  if (!ok) {
    const want = kind === 'integer' ? 'integer' : kind === 'number' ? 'number' : kind === 'string' ? 'string' : kind === 'boolean' ? 'boolean' : undefined;
    throw new DdsError('dds_type', `${at}: declared ${arg.type}, ${want ? `declare it ${want}` : 'which no argument can fill'}`);
  }
  if (kind === 'integer') {
    const [lo, hi] = INTEGER_RANGES[f.type]!;
    const bounds = [arg.min, arg.max, ...(arg.values ?? [])].filter((v): v is number => typeof v === 'number');
    const out = bounds.find((v) => v < lo || v > hi);
    if (out !== undefined) throw new DdsError('dds_type', `${at}: ${out} does not fit a ${f.type} (${lo}..${hi})`);
  }
  return found;
}

/** Checks a fixed value against its field: an existing path, and for a primitive field a value of its kind. */
export function checkFixedField(codec: RosCodec, path: string, value: unknown): void {
  const { field } = fieldAt(codec, path);
  const at = `fixed "${path}" (a ${field.type}${field.isArray ? ' array' : ''} of ${codec.rosType})`;
  if (field.isArray) {
    if (!Array.isArray(value)) throw new DdsError('dds_type', `${at}: give an array, not ${JSON.stringify(value)}`);
    return;
  }
  if (field.isComplex) {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new DdsError('dds_type', `${at}: give an object of its fields`);
    return;
  }
  const kind = kindOf(field.type);
  const bad =
    (kind === 'string' && typeof value !== 'string') ||
    (kind === 'boolean' && typeof value !== 'boolean') ||
    (kind === 'number' && typeof value !== 'number') ||
    (kind === 'integer' && (typeof value !== 'number' || !Number.isInteger(value) || !fits(field.type, value)));
  if (bad) throw new DdsError('dds_type', `${at}: ${JSON.stringify(value)} is not a ${field.type}`);
}

/** Whether integer `value` fits integer type `type`. */
export function fits(type: string, value: number): boolean {
  const r = INTEGER_RANGES[type];
  return !r || (value >= r[0] && value <= r[1]);
}

/** Sets `value` at `path` of `message`, making the objects on the way. */
export function setPath(message: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let at = message;
  for (const key of path.slice(0, -1)) {
    const next = at[key];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[path[path.length - 1]!] = value;
}
