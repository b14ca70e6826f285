// Reads the data of a Python pickle (lists, dicts, strings, numbers) without running any of it: OM1's knowledge-base metadata (`NAME.pkl`).
import { CortexError } from '../errors.js';

/**
 * A pickle that cannot be read as data: cut short, an unknown opcode, or one that would build a Python
 * object (a class by name, a call). Such a pickle runs code when Python loads it; here it is refused.
 */
export class PickleError extends CortexError {
  constructor(message: string) {
    super('pickle_unreadable', message);
    this.name = 'PickleError';
  }
}

/** A pickled value as plain data: dicts become objects (keys as strings), tuples and sets arrays, bytes Buffers. */
export type PickleValue = null | boolean | number | bigint | string | Buffer | PickleValue[] | { [key: string]: PickleValue };

const MARK = Symbol('mark');
type Slot = PickleValue | typeof MARK;

/** Opcodes that build objects from classes (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ, NEWOBJ_EX, EXT*, PERSID). */
const CODE_OPCODES = new Map<number, string>([
  [0x63, 'GLOBAL'],
  [0x93, 'STACK_GLOBAL'],
  [0x52, 'REDUCE'],
  [0x62, 'BUILD'],
  [0x69, 'INST'],
  [0x6f, 'OBJ'],
  [0x81, 'NEWOBJ'],
  [0x92, 'NEWOBJ_EX'],
  [0x82, 'EXT1'],
  [0x83, 'EXT2'],
  [0x84, 'EXT4'],
  [0x50, 'PERSID'],
  [0x51, 'BINPERSID'],
]);

// long: one case per pickle opcode over one stack and memo, read as a table; split up, each case would need the reader's state passed in.
/** Reads the pickle in `bytes` (protocols 0 to 5, the data opcodes); throws PickleError naming what it refused. */
export function readPickle(bytes: Buffer): PickleValue {
  let pos = 0;
  const stack: Slot[] = [];
  const memo = new Map<number, PickleValue>();
  const need = (n: number) => {
    if (pos + n > bytes.length) throw new PickleError(`cut short at byte ${pos} (needs ${n} more)`);
  };
  const u8 = () => (need(1), bytes[pos++]!);
  const take = (n: number) => {
    need(n);
    const b = bytes.subarray(pos, pos + n);
    pos += n;
    return b;
  };
  const u32 = () => (need(4), (pos += 4), bytes.readUInt32LE(pos - 4));
  const u64 = () => {
    need(8);
    const v = bytes.readBigUInt64LE(pos);
    pos += 8;
    if (v > BigInt(bytes.length)) throw new PickleError(`a length of ${v} bytes at byte ${pos - 8} is past the end`);
    return Number(v);
  };
  const line = () => {
    const end = bytes.indexOf(0x0a, pos);
    if (end < 0) throw new PickleError(`cut short at byte ${pos} (a line without its end)`);
    const s = bytes.toString('latin1', pos, end);
    pos = end + 1;
    return s;
  };
  const pop = (): PickleValue => {
    const v = stack.pop();
    if (v === undefined || v === MARK) throw new PickleError(`the stack is empty at byte ${pos - 1}`);
    return v;
  };
  const top = (): PickleValue => {
    const v = stack[stack.length - 1];
    if (v === undefined || v === MARK) throw new PickleError(`the stack is empty at byte ${pos - 1}`);
    return v;
  };
  const popMark = (): PickleValue[] => {
    const at = stack.lastIndexOf(MARK);
    if (at < 0) throw new PickleError(`no mark on the stack at byte ${pos - 1}`);
    const items = stack.splice(at) as PickleValue[];
    items.shift();
    return items;
  };
  const keyOf = (k: PickleValue): string =>
    typeof k === 'string' ? k : Buffer.isBuffer(k) ? k.toString('latin1') : JSON.stringify(k, (_, v) => (typeof v === 'bigint' ? String(v) : v));
  const setItems = (target: PickleValue, pairs: PickleValue[]) => {
    if (typeof target !== 'object' || target === null || Array.isArray(target) || Buffer.isBuffer(target))
      throw new PickleError(`SETITEM on something that is not a dict at byte ${pos - 1}`);
    for (let i = 0; i + 1 < pairs.length; i += 2) target[keyOf(pairs[i]!)] = pairs[i + 1]!;
  };
  const append = (target: PickleValue, items: PickleValue[]) => {
    if (!Array.isArray(target)) throw new PickleError(`APPEND on something that is not a list at byte ${pos - 1}`);
    target.push(...items);
  };
  const int = (n: bigint): number | bigint => (n >= BigInt(Number.MIN_SAFE_INTEGER) && n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n);
  const long = (b: Buffer): number | bigint => {
    if (b.length === 0) return 0;
    let n = 0n;
    for (let i = b.length - 1; i >= 0; i--) n = (n << 8n) | BigInt(b[i]!);
    if (b[b.length - 1]! & 0x80) n -= 1n << BigInt(8 * b.length);
    return int(n);
  };

  for (;;) {
    const at = pos;
    const op = u8();
    const code = CODE_OPCODES.get(op);
    if (code) {
      const what = op === 0x63 ? ` ${line().trim()}.${line().trim()}` : '';
      throw new PickleError(
        `opcode ${code}${what} at byte ${at} builds a Python object: only data (lists, dicts, strings, numbers) is read, no Python code or class is run`,
      );
    }
    switch (op) {
      case 0x80: // PROTO
        if (u8() > 5) throw new PickleError(`protocol ${bytes[pos - 1]} is newer than 5`);
        break;
      case 0x95: // FRAME
        u64();
        break;
      case 0x2e: // STOP
        if (stack.length !== 1) throw new PickleError(`STOP with ${stack.length} values on the stack`);
        return pop();
      case 0x28: // MARK
        stack.push(MARK);
        break;
      case 0x30: // POP
        stack.pop();
        break;
      case 0x31: // POP_MARK
        popMark();
        break;
      case 0x32: // DUP
        stack.push(top());
        break;
      case 0x4e: // NONE
        stack.push(null);
        break;
      case 0x88: // NEWTRUE
        stack.push(true);
        break;
      case 0x89: // NEWFALSE
        stack.push(false);
        break;
      case 0x4b: // BININT1
        stack.push(u8());
        break;
      case 0x4d: // BININT2
        need(2);
        stack.push(bytes.readUInt16LE(pos));
        pos += 2;
        break;
      case 0x4a: // BININT
        need(4);
        stack.push(bytes.readInt32LE(pos));
        pos += 4;
        break;
      case 0x8a: // LONG1
        stack.push(long(take(u8())));
        break;
      case 0x8b: // LONG4
        stack.push(long(take(u32())));
        break;
      case 0x49: {
        // INT (text): 00/01 are False/True in protocol 0
        const s = line().trim();
        stack.push(s === '00' ? false : s === '01' ? true : int(BigInt(s)));
        break;
      }
      case 0x4c: // LONG (text)
        stack.push(int(BigInt(line().trim().replace(/L$/, ''))));
        break;
      case 0x47: // BINFLOAT
        need(8);
        stack.push(bytes.readDoubleBE(pos));
        pos += 8;
        break;
      case 0x46: // FLOAT (text)
        stack.push(Number(line().trim()));
        break;
      case 0x58: // BINUNICODE
        stack.push(take(u32()).toString('utf8'));
        break;
      case 0x8c: // SHORT_BINUNICODE
        stack.push(take(u8()).toString('utf8'));
        break;
      case 0x8d: // BINUNICODE8
        stack.push(take(u64()).toString('utf8'));
        break;
      case 0x56: // UNICODE (raw-unicode-escape line)
        stack.push(line().replace(/\\u([0-9a-fA-F]{4})|\\U([0-9a-fA-F]{8})/g, (_, a, b) => String.fromCodePoint(Number.parseInt(a ?? b, 16))));
        break;
      case 0x55: // SHORT_BINSTRING (Python 2 str)
        stack.push(take(u8()).toString('latin1'));
        break;
      case 0x54: // BINSTRING
        stack.push(take(u32()).toString('latin1'));
        break;
      case 0x43: // SHORT_BINBYTES
        stack.push(Buffer.from(take(u8())));
        break;
      case 0x42: // BINBYTES
        stack.push(Buffer.from(take(u32())));
        break;
      case 0x8e: // BINBYTES8
        stack.push(Buffer.from(take(u64())));
        break;
      case 0x5d: // EMPTY_LIST
        stack.push([]);
        break;
      case 0x29: // EMPTY_TUPLE
        stack.push([]);
        break;
      case 0x7d: // EMPTY_DICT
        stack.push({});
        break;
      case 0x8f: // EMPTY_SET
        stack.push([]);
        break;
      case 0x6c: // LIST
      case 0x74: // TUPLE
      case 0x91: // FROZENSET
        stack.push(popMark());
        break;
      case 0x85: // TUPLE1
        stack.push([pop()]);
        break;
      case 0x86: {
        // TUPLE2
        const b = pop();
        stack.push([pop(), b]);
        break;
      }
      case 0x87: {
        // TUPLE3
        const c = pop();
        const b = pop();
        stack.push([pop(), b, c]);
        break;
      }
      case 0x64: {
        // DICT
        const d: { [key: string]: PickleValue } = {};
        setItems(d, popMark());
        stack.push(d);
        break;
      }
      case 0x61: {
        // APPEND
        const v = pop();
        append(top(), [v]);
        break;
      }
      case 0x65: // APPENDS
      case 0x90: {
        // ADDITEMS (a set: kept as a list)
        const items = popMark();
        append(top(), items);
        break;
      }
      case 0x73: {
        // SETITEM
        const v = pop();
        const k = pop();
        setItems(top(), [k, v]);
        break;
      }
      case 0x75: {
        // SETITEMS
        const pairs = popMark();
        setItems(top(), pairs);
        break;
      }
      case 0x94: // MEMOIZE
        memo.set(memo.size, top());
        break;
      case 0x71: // BINPUT
        memo.set(u8(), top());
        break;
      case 0x72: // LONG_BINPUT
        memo.set(u32(), top());
        break;
      case 0x70: // PUT
        memo.set(Number(line()), top());
        break;
      case 0x68: // BINGET
      case 0x6a: // LONG_BINGET
      case 0x67: {
        // GET
        const i = op === 0x68 ? u8() : op === 0x6a ? u32() : Number(line());
        if (!memo.has(i)) throw new PickleError(`memo entry ${i} read at byte ${at} was never stored`);
        stack.push(memo.get(i)!);
        break;
      }
      default:
        throw new PickleError(`unknown opcode 0x${op.toString(16)} at byte ${at}`);
    }
  }
}

/** One passage of a pickled document list: where it came from and its text. */
export interface PickledPassage {
  heading: string;
  text: string;
}

const textOf = (v: PickleValue | undefined): string =>
  typeof v === 'string' ? v : v === undefined || v === null ? '' : Buffer.isBuffer(v) ? v.toString('utf8') : String(v);
const isDict = (v: PickleValue | undefined): v is { [key: string]: PickleValue } =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && !Buffer.isBuffer(v);

/**
 * The passages of a knowledge base's pickled metadata, the two shapes OM1's knowledge bases are written
 * in (its internal/knowledgebase/pickle.go): a list of `{text, metadata: {source, chunk_id}}` (each
 * entry one passage, under its source), or `{questions: [...], answers: [...]}` (each pair one passage,
 * the question then its answer). Anything else is refused with what was found.
 */
export function pickledPassages(bytes: Buffer): PickledPassage[] {
  const data = readPickle(bytes);
  if (Array.isArray(data)) {
    return data.map((item, i) => {
      if (!isDict(item)) throw new PickleError(`entry ${i} is not a dict ({text, metadata})`);
      const meta = isDict(item.metadata) ? item.metadata : {};
      const source = textOf(meta.source);
      const chunk = meta.chunk_id === undefined ? '' : ` (chunk ${textOf(meta.chunk_id)})`;
      // A question-and-answer entry answers with its answer (as OM1 gives it).
      const text = meta.type === 'qa_pair' && typeof meta.answer === 'string' ? `${textOf(item.text)}\n${meta.answer}` : textOf(item.text);
      return { heading: source ? `${source}${chunk}` : '', text };
    });
  }
  if (isDict(data)) {
    const { questions, answers } = data;
    if (!Array.isArray(questions) || !Array.isArray(answers))
      throw new PickleError(`a dict needs lists 'questions' and 'answers'; it has ${Object.keys(data).join(', ') || 'no keys'}`);
    if (questions.length !== answers.length) throw new PickleError(`${questions.length} questions but ${answers.length} answers`);
    return questions.map((q, i) => ({ heading: `question ${i + 1}`, text: `${textOf(q)}\n${textOf(answers[i])}` }));
  }
  throw new PickleError(`holds ${data === null ? 'None' : typeof data}, not a list of documents or a dict of questions and answers`);
}
