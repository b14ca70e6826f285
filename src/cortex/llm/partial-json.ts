// Incremental JSON parser for streamed tool-call arguments: fed fragments, it exposes the value built so far and says when it is complete.

/** A JSON text that cannot become valid whatever follows. */
export class PartialJsonError extends Error {
  constructor(
    message: string,
    readonly offset: number,
  ) {
    super(`${message} at character ${offset}`);
    this.name = 'PartialJsonError';
  }
}

type Frame = { kind: 'object'; value: Record<string, unknown>; key: string | undefined } | { kind: 'array'; value: unknown[] };

type Mode =
  | 'value' // expecting a value (root, after ':' or ',' in an array, or the first array item)
  | 'firstKey' // after '{': a key or '}'
  | 'key' // after ',' in an object: a key
  | 'colon' // after a key: ':'
  | 'after' // after a value: ',' or the container's closer (or nothing at the root)
  | 'string' // inside a string
  | 'escape' // after a backslash in a string
  | 'unicode' // collecting the 4 hex digits of \u
  | 'scalar' // inside a number or a literal (true, false, null)
  | 'done' // the root value is complete; only whitespace may follow
  | 'error';

const WS = new Set([' ', '\t', '\n', '\r']);
const ESCAPES: Record<string, string> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
const SCALAR_CHAR = /[-+.0-9eEtruefalsn]/;

/** Sets an own member, as JSON.parse does (a key `__proto__` must not change the prototype). */
function setMember(obj: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
}

/**
 * Parses one JSON value from fragments given to `push`, in O(total length): each character is read
 * once, whatever the fragment boundaries (mid-string, mid-escape, mid-number, mid-literal).
 *
 * Guarantees:
 * - `value` is the value built so far: objects and arrays with their complete members, plus a string
 *   in progress (what has been decoded of it, escapes included once complete). A key whose value has
 *   not started is absent; a number or literal in progress is absent until a delimiter ends it.
 *   Strings only grow, so a string read twice is a prefix the second time.
 * - `done` becomes true at the character that closes the root value (objects, arrays, strings), or
 *   at `end()` for a bare number or literal; afterwards only whitespace is accepted.
 * - Invalid input sets `error` (a PartialJsonError naming the offset) and everything after it is
 *   ignored; the same text given whole to JSON.parse would throw.
 */
export class IncrementalJson {
  private mode: Mode = 'value';
  private readonly stack: Frame[] = [];
  private root: unknown = undefined;
  private hasRoot = false;
  /** The string being read, decoded so far, and whether it is a key. */
  private str = '';
  private strIsKey = false;
  private hex = '';
  private scalar = '';
  private offset = 0;
  error: PartialJsonError | undefined;

  get done(): boolean {
    return this.mode === 'done';
  }

  /** The value so far (see the class comment); undefined before any value started. */
  get value(): unknown {
    return this.hasRoot ? this.root : undefined;
  }

  /** Feeds more characters. Returns `this` for chaining. */
  push(text: string): this {
    for (let i = 0; i < text.length && this.mode !== 'error'; i++, this.offset++) this.step(text[i]!);
    return this;
  }

  /** The input is over: a bare number or literal at the root completes; anything else incomplete is an error. */
  end(): this {
    if (this.mode === 'scalar' && this.stack.length === 0) this.finishScalar();
    if (this.mode !== 'done' && this.mode !== 'error') this.fail('unexpected end of input');
    return this;
  }

  private fail(message: string): void {
    this.error = new PartialJsonError(message, this.offset);
    this.mode = 'error';
  }

  private step(c: string): void {
    switch (this.mode) {
      case 'string':
        if (c === '"') return this.finishString();
        if (c === '\\') return void (this.mode = 'escape');
        if (c < ' ') return this.fail('control character in a string');
        return this.appendString(c);
      case 'escape':
        if (c === 'u') {
          this.hex = '';
          return void (this.mode = 'unicode');
        }
        if (ESCAPES[c] === undefined) return this.fail(`invalid escape \\${c}`);
        this.mode = 'string';
        return this.appendString(ESCAPES[c]);
      case 'unicode':
        if (!/[0-9a-fA-F]/.test(c)) return this.fail('invalid \\u escape');
        this.hex += c;
        if (this.hex.length < 4) return;
        this.mode = 'string';
        return this.appendString(String.fromCharCode(parseInt(this.hex, 16)));
      case 'scalar':
        if (SCALAR_CHAR.test(c)) return void (this.scalar += c);
        this.finishScalar();
        if ((this.mode as Mode) === 'error') return;
        return this.step(c);
      case 'done':
        if (!WS.has(c)) this.fail('unexpected character after the value');
        return;
      default:
        if (WS.has(c)) return;
        return this.structural(c);
    }
  }

  private structural(c: string): void {
    const top = this.stack.at(-1);
    switch (this.mode) {
      case 'value':
        if (c === ']' && top?.kind === 'array' && top.value.length === 0 && !this.afterComma) return this.close();
        return this.startValue(c);
      // biome-ignore lint/suspicious/noFallthroughSwitchClause: after `{`, a key is parsed like any key.
      case 'firstKey':
        if (c === '}') return this.close();
      case 'key':
        if (c !== '"') return this.fail('expected a key');
        this.str = '';
        this.strIsKey = true;
        this.mode = 'string';
        return;
      case 'colon':
        if (c !== ':') return this.fail("expected ':'");
        this.mode = 'value';
        return;
      case 'after':
        if (!top) return this.fail('unexpected character after the value');
        if (c === ',') {
          this.mode = top.kind === 'object' ? 'key' : 'value';
          this.afterComma = top.kind === 'array';
          return;
        }
        if ((c === '}' && top.kind === 'object') || (c === ']' && top.kind === 'array')) return this.close();
        return this.fail(`expected ',' or '${top.kind === 'object' ? '}' : ']'}'`);
      default:
        return this.fail('unexpected character');
    }
  }

  /** True right after a ',' in an array, where ']' is not allowed. */
  private afterComma = false;

  private startValue(c: string): void {
    this.afterComma = false;
    if (c === '{') {
      const value: Record<string, unknown> = {};
      this.attach(value);
      this.stack.push({ kind: 'object', value, key: undefined });
      this.mode = 'firstKey';
      return;
    }
    if (c === '[') {
      const value: unknown[] = [];
      this.attach(value);
      this.stack.push({ kind: 'array', value });
      this.mode = 'value';
      return;
    }
    if (c === '"') {
      this.str = '';
      this.strIsKey = false;
      this.attach('');
      this.mode = 'string';
      return;
    }
    if (/[-0-9tfn]/.test(c)) {
      this.scalar = c;
      this.mode = 'scalar';
      return;
    }
    this.fail('expected a value');
  }

  /** Puts a new value where the current position is: the root, the pending key of an object, or the end of an array. */
  private attach(v: unknown): void {
    const top = this.stack.at(-1);
    if (!top) {
      this.root = v;
      this.hasRoot = true;
    } else if (top.kind === 'object') setMember(top.value, top.key!, v);
    else top.value.push(v);
  }

  /** Replaces the value at the current position (a growing string). */
  private replace(v: unknown): void {
    const top = this.stack.at(-1);
    if (!top) this.root = v;
    else if (top.kind === 'object') setMember(top.value, top.key!, v);
    else top.value[top.value.length - 1] = v;
  }

  private appendString(s: string): void {
    this.str += s;
    if (!this.strIsKey) this.replace(this.str);
  }

  private finishString(): void {
    if (this.strIsKey) {
      (this.stack.at(-1) as Extract<Frame, { kind: 'object' }>).key = this.str;
      this.mode = 'colon';
      return;
    }
    this.completeValue();
  }

  private finishScalar(): void {
    let v: unknown;
    try {
      v = JSON.parse(this.scalar);
    } catch {
      return this.fail(`invalid number or literal "${this.scalar.slice(0, 20)}"`);
    }
    this.attach(v);
    this.completeValue();
  }

  private close(): void {
    this.stack.pop();
    this.completeValue();
  }

  private completeValue(): void {
    this.mode = this.stack.length === 0 ? 'done' : 'after';
  }
}

/** Parses `text` whole with the incremental parser (tests compare it with JSON.parse). */
export function parseIncrementally(fragments: readonly string[]): IncrementalJson {
  const p = new IncrementalJson();
  for (const f of fragments) p.push(f);
  return p.end();
}
