// The `--inspect` connection: @statelyai/inspect's WebSocket inspector with media and secrets stripped from what it sees.
import { createWebSocketInspector } from '@statelyai/inspect';
import { redact, SECRET_FIELDS } from '../../src/redact.js';

/** Strings at least this long made only of base64 characters are treated as media (audio, JPEG) and replaced. */
export const BASE64_MIN = 256;
const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;
const DATA_URL = /^data:[^;,]+;base64,/;
const MAX_DEPTH = 12;

/**
 * A copy of `value` safe to show in an inspector: Buffers, typed arrays and ArrayBuffers become
 * `[binary N bytes]`, long base64 strings and data: URLs become `[base64 N chars]`, fields named
 * like secrets are blanked, and secret shapes inside strings are redacted. Functions, AbortSignals
 * and other class instances that are not plain data are shown by name only.
 */
export function sanitizeForInspector(value: unknown, depth = 0): unknown {
  if (depth > MAX_DEPTH) return '[depth]';
  if (typeof value === 'string') {
    if (DATA_URL.test(value) || (value.length >= BASE64_MIN && BASE64.test(value))) return `[base64 ${value.length} chars]`;
    return redact(value);
  }
  if (value === null || typeof value !== 'object') return typeof value === 'function' ? '[function]' : value;
  if (Buffer.isBuffer(value) || ArrayBuffer.isView(value)) return `[binary ${(value as ArrayBufferView).byteLength} bytes]`;
  if (value instanceof ArrayBuffer) return `[binary ${value.byteLength} bytes]`;
  if (value instanceof Error) return { name: value.name, message: redact(value.message) };
  if (Array.isArray(value)) return value.map((v) => sanitizeForInspector(v, depth + 1));
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return `[${value.constructor?.name ?? 'object'}]`;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_FIELDS.includes(k) && v !== undefined && v !== '' ? '[REDACTED]' : sanitizeForInspector(v, depth + 1);
  }
  return out;
}

export interface InspectOptions {
  /** WebSocket address of the inspector; default Stately's `ws://localhost:8080`. */
  url?: string;
  /** Connect at once (default true); tests pass false. */
  autoStart?: boolean;
}

/**
 * Creates the inspector for `cortexd run --inspect`. Pass `inspector.inspect` as the `inspect`
 * option of the root actor; stop it with `inspector.stop()` when the agent stops.
 */
export function createModeInspector(options: InspectOptions = {}) {
  return createWebSocketInspector({ url: options.url ?? 'ws://localhost:8080', ...inspectorOptions(options) });
}

/** The sanitising options shared by every inspector cortexd creates. */
export function inspectorOptions(options: Pick<InspectOptions, 'autoStart'> = {}) {
  return {
    autoStart: options.autoStart ?? true,
    sanitizeEvent: <E>(event: E) => sanitizeForInspector(event) as E,
    sanitizeContext: <C>(context: C) => sanitizeForInspector(context) as C,
    // The last step before the socket, for every message: the inspector's own sanitisers see only a
    // snapshot's `context` and the event, but a promise actor's snapshot carries its `input` (and
    // `output`, `error`), and actor registrations carry the machine definition as JSON text (a literal
    // context may hold secrets). All of them are sanitised here.
    serialize: <E>(event: E): E => {
      const e = event as { definition?: unknown; snapshot?: unknown; event?: unknown };
      return {
        ...event,
        ...(typeof e.definition === 'string' ? { definition: sanitizeDefinition(e.definition) } : {}),
        ...(e.snapshot !== undefined ? { snapshot: sanitizeForInspector(e.snapshot) } : {}),
        ...(e.event !== undefined ? { event: sanitizeForInspector(e.event) } : {}),
      };
    },
  };
}

function sanitizeDefinition(definition: string): string {
  try {
    return JSON.stringify(sanitizeForInspector(JSON.parse(definition)));
  } catch {
    return redact(definition);
  }
}
