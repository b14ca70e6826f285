// Bounds of a JSON request body checked by one linear scan over its bytes before JSON.parse: nesting depth and the number of objects and arrays.

/** What the service accepts in one JSON body (decisions; the spec names no limit). */
export interface JsonLimits {
  /** Deepest nesting of objects and arrays. */
  depth: number;
  /** Objects and arrays in the whole body. */
  containers: number;
}

/** A body over a JSON bound: 400 for depth, 413 for size; `message` says which bound and where. */
export interface JsonRefusal {
  status: 400 | 413;
  message: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/**
 * Scans `body` (UTF-8 bytes) once, skipping strings with a native search for their closing quote:
 * every `{` or `[` outside a string opens a level, every `}` or `]` closes one. Stops at the first byte past a
 * bound, so a refused body costs at most one pass and no allocation, whatever its shape
 * (`[[[[...` of a megabyte is refused at byte `depth + 1`). It validates nothing else:
 * JSON.parse still decides whether the body is JSON.
 */
export function checkJsonLimits(body: Uint8Array, limits: JsonLimits): JsonRefusal | undefined {
  let depth = 0;
  let containers = 0;
  const buf = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i]!;
    if (c === QUOTE) {
      // A string: jump to its closing quote (native search), past quotes escaped by an odd run of backslashes.
      let j = buf.indexOf(QUOTE, i + 1);
      while (j !== -1) {
        let slashes = 0;
        while (buf[j - 1 - slashes] === BACKSLASH) slashes++;
        if (slashes % 2 === 0) break;
        j = buf.indexOf(QUOTE, j + 1);
      }
      if (j === -1) return undefined;
      i = j;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limits.depth) return { status: 400, message: `nested deeper than ${limits.depth} levels (at byte ${i})` };
      if (++containers > limits.containers) return { status: 413, message: `more than ${limits.containers} objects and arrays (at byte ${i})` };
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return undefined;
}
