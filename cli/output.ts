// How commands print: results on stdout, warnings and errors on stderr, one line each, never a stack trace.
import { ConfigError, CortexError, describeError, formatIssue } from '../src/errors.js';

/** Exit codes: 0 ok, 1 runtime failure, 2 invalid configuration or usage. */
export const EXIT = { ok: 0, failure: 1, invalid: 2 } as const;

/** Longest problem or warning line printed; the rest is cut with a count, so one bad value cannot flood a terminal. */
export const MAX_LINE = 2000;

/**
 * One line, whatever a configuration holds: control characters (a newline inside a mode name or
 * a value) are escaped as in JSON, and very long lines are cut.
 */
export function oneLine(text: string): string {
  // eslint-disable-next-line no-control-regex
  const escaped = text.replace(/[\u0000-\u001f\u007f\u2028\u2029]/g, (c) => JSON.stringify(c).slice(1, -1));
  return escaped.length > MAX_LINE ? `${escaped.slice(0, MAX_LINE)}... (${escaped.length - MAX_LINE} more characters)` : escaped;
}

export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function warnLine(line: string): void {
  process.stderr.write(`warning: ${oneLine(line)}\n`);
}

export function errLine(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** A command used wrongly (a bad option value): exit 2, as commander's own usage errors. */
export class UsageError extends CortexError {
  constructor(message: string) {
    super('usage', message);
    this.name = 'UsageError';
  }
}

/** Prints an error the way users should see it and returns the exit code it deserves. */
export function reportError(err: unknown): number {
  if (err instanceof ConfigError) {
    for (const w of new Set(err.warnings)) warnLine(w);
    // A problem found twice (a legacy file's field checked in its converted mode too) is printed once.
    for (const line of new Set(err.issues.map((issue) => oneLine(formatIssue(issue))))) out(line);
    return EXIT.invalid;
  }
  if (err instanceof UsageError) {
    errLine(`cortexd: ${err.message}`);
    return EXIT.invalid;
  }
  if (err instanceof CortexError) {
    errLine(`cortexd: ${err.message}`);
    return EXIT.failure;
  }
  errLine(`cortexd: ${describeError(err)}`);
  if (process.env.CORTEX_DEBUG && err instanceof Error && err.stack) errLine(err.stack);
  return EXIT.failure;
}
