// Parses a configuration's text (JSON5) into a plain object, refusing keys that would reach an object's prototype.
import JSON5 from 'json5';
import { ConfigError } from '../errors.js';
import { formatPath } from './env.js';
import { forbiddenKeyPaths } from './forbidden-keys.js';
import { locator } from './locate.js';
import { syntaxHint } from './syntax-hint.js';

/** The ConfigError for forbidden keys in `value` (shown as `file`), or undefined when there are none. */
export function forbiddenKeysError(value: unknown, file: string): ConfigError | undefined {
  const paths = forbiddenKeyPaths(value);
  if (paths.length === 0) return undefined;
  return new ConfigError(
    paths.map((p) => ({
      file,
      path: formatPath(p),
      kind: 'format' as const,
      message: `the key "${String(p[p.length - 1])}" is not allowed in a configuration (it would change how every object is read); remove it`,
    })),
  );
}

/**
 * Parses `text` as a configuration file named `file` in messages: JSON5, an object at the top, no
 * forbidden key anywhere. Throws one ConfigError (kind `parse` for syntax, with line and column).
 */
export function parseConfigText(text: string, file: string): Record<string, unknown> {
  let raw: unknown;
  try {
    raw = JSON5.parse(text);
  } catch (err) {
    if (err instanceof RangeError) throw new ConfigError([{ file, path: '', kind: 'parse', message: 'nested too deeply to parse' }]);
    const e = err as SyntaxError & { lineNumber?: number; columnNumber?: number };
    const what = String(e.message ?? err)
      .replace(/^JSON5: /, '')
      .replace(/ at \d+:\d+$/, '');
    const at = e.lineNumber !== undefined ? { line: e.lineNumber, column: Math.max(1, e.columnNumber ?? 1) } : {};
    // The common slips in plain words, placed where the fix goes; the parser's own words after them.
    const hint = e.lineNumber !== undefined ? syntaxHint(text, e.lineNumber, e.columnNumber ?? 1, /end of input/.test(what)) : undefined;
    const parser = `the JSON5 parser stopped at line ${e.lineNumber ?? '?'}, column ${e.columnNumber ?? '?'}: ${what}`;
    const message = hint ? `${hint.message} (${parser})` : `${what}; check this line and the one before it for a missing comma, quote, colon or brace`;
    throw new ConfigError([{ file, path: '', kind: 'parse', message, ...(hint ? { line: hint.line, column: hint.column } : at) }]);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError([
      { file, path: '', kind: 'format', message: `the top level must be an object, got ${Array.isArray(raw) ? 'a list' : JSON.stringify(raw)}` },
    ]);
  }
  const forbidden = forbiddenKeysError(raw, file);
  if (forbidden) {
    const places = locator(text);
    throw new ConfigError(forbidden.issues.map((i) => ({ ...i, ...places.at(i.path) })));
  }
  return raw as Record<string, unknown>;
}
