// Typed errors of cortexd: every failure a user can see carries a code and a message without secrets.
import { redact } from './redact.js';

/** Base of every error cortexd throws on purpose. `message` is already redacted. */
export class CortexError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(redact(message), options);
    this.name = 'CortexError';
    this.code = code;
  }
}

/** One problem found in a configuration: the file, the JSON path inside it, and what is wrong. */
export interface ConfigIssue {
  file: string;
  /** Dotted JSON path such as `modes.guard.hertz` or `modes.a.agent_inputs[0].type`; empty for the whole file. */
  path: string;
  message: string;
  /** `unknown_type` marks a plugin type the registry does not know; other codes are format problems. */
  kind: 'format' | 'unknown_type' | 'parse' | 'version' | 'env' | 'reference';
  /** Where in the file (1-based), when the problem has a place there: the key, or the object a missing key belongs in. */
  line?: number;
  column?: number;
}

/** Formats an issue the way `cortexd check` prints it: `file:line:column: json.path: message` (as compilers do, so editors jump there). */
export function formatIssue(issue: ConfigIssue): string {
  const file = issue.line !== undefined ? `${issue.file}:${issue.line}:${issue.column ?? 1}` : issue.file;
  return issue.path ? `${file}: ${issue.path}: ${issue.message}` : `${file}: ${issue.message}`;
}

/** A configuration that cannot be used; carries every problem found, not only the first. */
export class ConfigError extends CortexError {
  readonly issues: ConfigIssue[];
  /** Warnings found before the load failed (unknown fields, a newer version...), shown with the problems. */
  readonly warnings: string[];
  constructor(issues: ConfigIssue[], warnings: string[] = []) {
    super('config_invalid', issues.map(formatIssue).join('\n'));
    this.name = 'ConfigError';
    this.issues = issues;
    this.warnings = warnings;
  }
}

/** Turns anything thrown (including libraries that throw strings) into a redacted one-line message. */
export function describeError(err: unknown): string {
  if (err instanceof Error) return redact(err.message);
  if (typeof err === 'string') return redact(err);
  try {
    return redact(JSON.stringify(err));
  } catch {
    return redact(String(err));
  }
}

/** A plugin a configuration or the agent names that the registry does not know, or that was not loaded. */
export class PluginError extends CortexError {
  constructor(code: 'plugin_unknown' | 'plugin_not_loaded' | 'plugin_load_failed', message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.name = 'PluginError';
  }
}
