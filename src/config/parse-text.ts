// Parses a configuration's text (JSON5) into a plain object, refusing keys that would reach an object's prototype.
import JSON5 from 'json5';
import { ConfigError } from '../errors.js';
import { formatPath } from './env.js';
import { forbiddenKeyPaths } from './forbidden-keys.js';

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
    const where = e.lineNumber !== undefined ? `line ${e.lineNumber}, column ${e.columnNumber}: ` : '';
    const what = String(e.message ?? err)
      .replace(/^JSON5: /, '')
      .replace(/ at \d+:\d+$/, '');
    throw new ConfigError([{ file, path: '', kind: 'parse', message: `${where}${what}` }]);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ConfigError([
      { file, path: '', kind: 'format', message: `the top level must be an object, got ${Array.isArray(raw) ? 'a list' : JSON.stringify(raw)}` },
    ]);
  }
  const forbidden = forbiddenKeysError(raw, file);
  if (forbidden) throw forbidden;
  return raw as Record<string, unknown>;
}
