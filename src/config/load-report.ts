// The report of one configuration load: its problems and warnings, each placed in the file, with unset variables and unknown fields said once.
import { ConfigError, type ConfigIssue } from '../errors.js';
import { formatPath, type UnresolvedVariable } from './env.js';
import type { UnknownField } from './issues.js';
import type { locator } from './locate.js';

type Path = Array<PropertyKey> | string;

/** The problems (which fail the load) and warnings of one load, in the order they were found. */
export class LoadReport {
  readonly issues: ConfigIssue[] = [];
  readonly warnings: string[] = [];
  /** Paths are reported as the user wrote the file: for a legacy file, `modes.<name>.hertz` is `hertz`. */
  filePath: (p: string) => string = (p) => p;
  /** Each problem and warning carries its line and column once the file has parsed. */
  places: ReturnType<typeof locator> | undefined;

  /** `shown`: the file's name as printed (relative to the working directory when inside it). */
  constructor(readonly shown: string) {}

  /** The path as the user wrote it. */
  at(path: Path): string {
    return this.filePath(typeof path === 'string' ? path : formatPath(path));
  }

  fail = (path: Path, message: string, kind: ConfigIssue['kind'] = 'format'): void => {
    const p = this.at(path);
    this.issues.push({ file: this.shown, path: p, message, kind, ...this.places?.at(p) });
  };

  warn = (path: Path, message: string): void => {
    const p = this.at(path);
    const place = this.places?.at(p);
    const where = place ? `${this.shown}:${place.line}:${place.column}` : this.shown;
    this.warnings.push(p ? `${where}: ${p}: ${message}` : `${where}: ${message}`);
  };

  /** The error that ends the load with every problem and warning found so far. */
  error(): ConfigError {
    return new ConfigError(this.issues, this.warnings);
  }
}

/** Fields left out because their variable is unset: reported once each, as a problem or as a warning. */
export interface UnsetFields {
  /** A schema problem: where the field was left out for an unset variable, a problem naming the variable(s); otherwise the problem as it is. */
  failOrUnset(path: Array<PropertyKey>, message: string, kind: ConfigIssue['kind']): void;
  /** Every other field left out: a warning each (optional fields), once all checks have run. */
  warnUnset(): void;
}

/**
 * A field left out for an unset variable is an error naming the variable(s) when the schema (or a
 * plugin's schema) requires it, else a warning once all checks have run. `envFile` is the `.env`
 * file as printed.
 */
export function unsetFields(report: LoadReport, unresolved: UnresolvedVariable[], envFile: string): UnsetFields {
  const unresolvedAt = new Map<string, string[]>();
  for (const u of unresolved) {
    const p = formatPath(u.path);
    unresolvedAt.set(p, [...(unresolvedAt.get(p) ?? []), u.variable]);
  }
  const requiredMissing = new Set<string>();
  return {
    failOrUnset(path, message, kind) {
      const p = report.at(path);
      const variables = unresolvedAt.get(p);
      if (variables) {
        if (requiredMissing.has(p)) return;
        requiredMissing.add(p);
        const names = variables.join(', ');
        const example = variables[0]!;
        report.fail(
          p,
          `environment variable${variables.length > 1 ? 's' : ''} ${names} ${variables.length > 1 ? 'are' : 'is'} not set and ${variables.length > 1 ? 'have' : 'has'} no default: set ${variables.length > 1 ? 'them' : 'it'} in ${envFile} or the environment, or write \${${example}:-default}`,
          'env',
        );
      } else if (p === 'api_key' && message.startsWith('missing')) {
        report.fail(p, 'missing: set api_key in the file or the OM_API_KEY environment variable', 'format');
      } else {
        report.fail(p, message, kind);
      }
    },
    warnUnset() {
      for (const [p, variables] of unresolvedAt) {
        if (!requiredMissing.has(p))
          report.warn(
            p,
            `environment variable${variables.length > 1 ? 's' : ''} ${variables.join(', ')} not set and no default; this optional field is left out`,
          );
      }
      unresolvedAt.clear();
    },
  };
}

/** The last segment of a formatted path: `hertz` of `modes.a.hertz`, `["a.b"]` of `x["a.b"]`. */
function lastSegment(path: string): string {
  const m = /(\[[^\]]*\]|[A-Za-z_$][A-Za-z0-9_$]*)$/.exec(path);
  return m ? m[1]! : path;
}

/**
 * Reports a field nothing carries out: nothing is silently ignored, so it is a problem (or a warning
 * with `unknownFields: 'warn'`). A misspelt field names the likely one, and that one's "missing"
 * problem (when required) is folded into this one.
 */
export function unknownFieldReporter(report: LoadReport, unknownFields: 'error' | 'warn' | undefined): (u: UnknownField, message: string) => void {
  return (u, message) => {
    const at = report.filePath(u.path);
    if (u.suggestion) {
      const parent = at.slice(0, at.length - lastSegment(at).length).replace(/\.$/, '');
      const meant = parent ? `${parent}.${u.suggestion}` : u.suggestion;
      const missing = report.issues.findIndex((i) => i.path === meant && i.message.startsWith('missing'));
      if (missing >= 0) report.issues.splice(missing, 1);
      message = `unknown field; did you mean ${JSON.stringify(u.suggestion)}? (rename it${missing >= 0 ? `: ${u.suggestion} is required and missing` : ''}; \`cortexd schema\` lists the fields)`;
    }
    (unknownFields === 'warn' ? report.warn : report.fail)(at, message);
  };
}
