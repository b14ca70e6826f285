// How commands print: results on stdout, warnings and errors on stderr, one line each, never a stack trace.
import { ConfigError, CortexError, describeError, formatIssue } from '../errors.js';

/** Exit codes: 0 ok, 1 runtime failure, 2 invalid configuration or usage. */
export const EXIT = { ok: 0, failure: 1, invalid: 2 } as const;

export function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

export function warnLine(line: string): void {
  process.stderr.write(`warning: ${line}\n`);
}

export function errLine(line: string): void {
  process.stderr.write(`${line}\n`);
}

/** Prints an error the way users should see it and returns the exit code it deserves. */
export function reportError(err: unknown): number {
  if (err instanceof ConfigError) {
    for (const w of err.warnings) warnLine(w);
    for (const issue of err.issues) out(formatIssue(issue));
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
