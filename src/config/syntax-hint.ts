// Plain words for the JSON5 slips people make (a missing quote, comma, colon or brace): where to put the fix, from the text before the parser stopped.

/** The fix for a syntax error, placed where it goes. */
export interface SyntaxHint {
  line: number;
  column: number;
  message: string;
}

interface Open {
  ch: '{' | '[';
  line: number;
  column: number;
}

/** What came last before the error: a value's end (a comma may follow), a key (a colon must), or punctuation. */
type Last = { kind: 'value' | 'key' | 'open' | 'comma' | 'colon' | 'none'; line: number; column: number; text?: string };

const WORD = /[A-Za-z0-9_$.+-]/;

/**
 * Reads `text` up to where JSON5 stopped (`line`, `column`, 1-based; column 0 after a line break) and
 * says what is most likely missing there, or undefined when the slip is not one of the common ones.
 * `endOfInput`: the parser ran out of text.
 */
export function syntaxHint(text: string, line: number, column: number, endOfInput: boolean): SyntaxHint | undefined {
  const lineStarts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') lineStarts.push(i + 1);
  const stop = endOfInput ? text.length : Math.min(text.length, (lineStarts[line - 1] ?? text.length) + Math.max(0, column - 1));
  const scanned = scanTo(text, stop, lineStarts);
  if ('hint' in scanned) return scanned.hint;
  const open = scanned.stack.at(-1);
  if (endOfInput) {
    if (!open) return undefined;
    return {
      line: open.line,
      column: open.column,
      message: `${openName(open)} that opens here is never closed: add a ${closerOf(open)} where it ends (the file ends first)`,
    };
  }
  return hintAt(text[stop] ?? '', open, scanned.last, line, column);
}

const openName = (o: Open) => (o.ch === '{' ? 'the { (an object)' : 'the [ (a list)');
const closerOf = (o: Open) => (o.ch === '{' ? '}' : ']');

/**
 * Scans `text` to `stop` as JSON5 reads it (comments, quotes, brackets, punctuation, bare words):
 * the brackets still open and what came last; or the hint for a quote that is not closed.
 */
function scanTo(text: string, stop: number, lineStarts: number[]): { stack: Open[]; last: Last } | { hint: SyntaxHint } {
  const stack: Open[] = [];
  let last: Last = { kind: 'none', line: 1, column: 1 };
  let ln = 1;
  let col = 1;
  let i = 0;
  const advance = () => {
    if (text[i] === '\n') (ln += 1), (col = 1);
    else col += 1;
    i += 1;
  };
  const expectsKey = () => stack.at(-1)?.ch === '{' && (last.kind === 'open' || last.kind === 'comma');
  while (i < stop) {
    const ch = text[i]!;
    if (ch === '/' && text[i + 1] === '/') {
      while (i < stop && text[i] !== '\n') advance();
    } else if (ch === '/' && text[i + 1] === '*') {
      while (i < stop && !(text[i] === '*' && text[i + 1] === '/')) advance();
      advance(), advance();
    } else if (ch === '"' || ch === "'") {
      const start = { line: ln, column: col };
      const key = expectsKey();
      advance();
      while (i < stop && text[i] !== ch && text[i] !== '\n') {
        if (text[i] === '\\') advance();
        advance();
      }
      if (i >= stop || text[i] === '\n') {
        const message = `the text in quotes that starts here is not closed: add the closing ${ch} at its end (quotes open and close on one line; a line break inside is written \\n)`;
        return { hint: { ...start, message } };
      }
      advance();
      last = { kind: key ? 'key' : 'value', line: ln, column: col, text: text.slice(lineStarts[start.line - 1]! + start.column - 1, i) };
    } else if (ch === '{' || ch === '[') {
      stack.push({ ch, line: ln, column: col });
      advance();
      last = { kind: 'open', line: ln, column: col };
    } else if (ch === '}' || ch === ']') {
      stack.pop();
      advance();
      last = { kind: 'value', line: ln, column: col };
    } else if (ch === ',' || ch === ':') {
      advance();
      last = { kind: ch === ',' ? 'comma' : 'colon', line: ln, column: col };
    } else if (WORD.test(ch)) {
      const key = expectsKey();
      const from = i;
      while (i < stop && WORD.test(text[i]!)) advance();
      last = { kind: key ? 'key' : 'value', line: ln, column: col, text: text.slice(from, i) };
    } else advance();
  }
  return { stack, last };
}

/** The hint for the character `ch` where the parser stopped, given the innermost open bracket and what came last. */
function hintAt(ch: string, open: Open | undefined, last: Last, line: number, column: number): SyntaxHint | undefined {
  const startsValue = /["'{[A-Za-z0-9_$+\-.]/.test(ch);
  if ((ch === '}' || ch === ']') && !open)
    return { line, column, message: `a ${ch} with nothing open before it: remove it, or add the ${ch === '}' ? '{' : '['} it closes` };
  if ((ch === '}' || ch === ']') && open && closerOf(open) !== ch)
    return { line: open.line, column: open.column, message: `${openName(open)} that opens here is closed by a ${ch}: add its ${closerOf(open)} before that` };
  if ((ch === '}' || ch === ']' || ch === ',') && last.kind === 'colon')
    return { line: last.line, column: last.column, message: 'a value is missing after this colon' };
  if (ch === ',' && (last.kind === 'comma' || last.kind === 'open'))
    return { line, column, message: 'a comma with nothing before it: remove one of the commas' };
  if (last.kind === 'key' && ch !== ':')
    return { line: last.line, column: last.column, message: `a colon is missing after the key ${last.text ?? ''}: write key: value`.replace('key  ', 'key ') };
  if (ch === ':' && last.kind !== 'key')
    return { line, column, message: 'a colon where no key comes before it: a key is missing, or a comma was typed as a colon' };
  if (last.kind === 'value' && startsValue) {
    const where = last.line === line ? 'here' : `at the end of line ${last.line}`;
    return { line: last.line, column: last.column, message: `a comma is missing ${where}: entries of an object or a list are separated by commas` };
  }
  return undefined;
}
