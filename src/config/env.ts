// `${VAR}` and `${VAR:-default}` substitution in every string value of a parsed configuration.
import { join } from 'node:path';
import { parse as parseDotenv } from 'dotenv';
import { projectRoot } from '../paths.js';
import { FORBIDDEN_KEYS } from './forbidden-keys.js';
import { readRegularFile } from './read-file.js';

/** Largest `.env` file read; a bigger one (or one that is not a regular file) is ignored. */
export const MAX_ENV_FILE_BYTES = 1024 * 1024;

export type JsonPath = Array<string | number>;

/** A variable that was not set and had no default, and where it was used. */
export interface UnresolvedVariable {
  variable: string;
  path: JsonPath;
}

/** A `${` without its closing `}` or with a malformed name. */
export interface SubstitutionProblem {
  path: JsonPath;
  message: string;
}

/** A string whose value took text from variables: messages must not echo it (see conceal.ts). */
export interface SubstitutedValue {
  path: JsonPath;
  /** The variables whose (non-empty) values went into it. */
  variables: string[];
  value: string;
}

export interface SubstitutionResult {
  value: unknown;
  unresolved: UnresolvedVariable[];
  problems: SubstitutionProblem[];
  substituted: SubstitutedValue[];
}

/** The `.env` file the variables are read from (it may not exist): `$CORTEX_ENV_FILE`, else `.env` in the project. */
export function envFilePath(processEnv: NodeJS.ProcessEnv = process.env): string {
  return processEnv.CORTEX_ENV_FILE ?? join(projectRoot(), '.env');
}

/**
 * The variables a configuration sees: the `.env` file beside the project (or `$CORTEX_ENV_FILE`)
 * overlaid by the process environment, so the process environment wins. The file is read only when
 * it is a regular file within MAX_ENV_FILE_BYTES (a FIFO or a link to a device is skipped, never waited on).
 */
export function configEnvironment(processEnv: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  const file = envFilePath(processEnv);
  let fromFile: Record<string, string> = {};
  try {
    fromFile = parseDotenv(readRegularFile(file, MAX_ENV_FILE_BYTES));
  } catch {
    fromFile = {};
  }
  return { ...fromFile, ...processEnv };
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Substitutes one string. Rules (POSIX-shell-like, documented in docs/architecture.md, "Configuration loading"):
 * - `${VAR}`: the value of VAR; set-but-empty gives ''.
 * - `${VAR:-default}`: the value of VAR unless it is unset OR empty, else `default` (may be empty).
 * - `$${` is a literal `${`.
 * - Several references per string are allowed; the default text ends at the first `}`.
 * Returns the string, or the names that were unset without a default, or a syntax problem; `used`
 * names the variables whose non-empty values went into the string.
 */
export function substituteString(input: string, env: Record<string, string | undefined>): { value: string; unset: string[]; used: string[]; problem?: string } {
  let out = '';
  const unset: string[] = [];
  const used: string[] = [];
  let i = 0;
  while (i < input.length) {
    const at = input.indexOf('${', i);
    if (at < 0) {
      out += input.slice(i);
      break;
    }
    if (at > 0 && input[at - 1] === '$') {
      out += input.slice(i, at - 1) + '${';
      i = at + 2;
      continue;
    }
    out += input.slice(i, at);
    const close = input.indexOf('}', at + 2);
    if (close < 0) return { value: input, unset, used, problem: `unterminated "\${" at character ${at + 1}` };
    const body = input.slice(at + 2, close);
    const sep = body.indexOf(':-');
    const name = sep >= 0 ? body.slice(0, sep) : body;
    if (!NAME.test(name)) {
      return { value: input, unset, used, problem: `"\${${body}}" is not a valid variable reference (expected \${NAME} or \${NAME:-default})` };
    }
    const current = env[name];
    if (sep >= 0) {
      out += current === undefined || current === '' ? body.slice(sep + 2) : current;
    } else if (current === undefined) {
      unset.push(name);
    } else {
      out += current;
    }
    if (current !== undefined && current !== '') used.push(name);
    i = close + 1;
  }
  return { value: out, unset, used };
}

/**
 * Substitutes every string value (never keys) of a JSON value. Strings that reference an unset
 * variable without default are left out: the nearest object property holding them is deleted and
 * reported in `unresolved`, so the schema decides whether the field was optional (a warning) or
 * required (an error that names the variable and the path).
 */
export function substituteAll(value: unknown, env: Record<string, string | undefined>): SubstitutionResult {
  const unresolved: UnresolvedVariable[] = [];
  const problems: SubstitutionProblem[] = [];
  const substituted: SubstitutedValue[] = [];

  // Returns the new value, or `REMOVE` when the property holding it must be deleted; the names of
  // the unset variables wait in `pending` until the object property that is removed is known.
  const REMOVE = Symbol('remove');
  let pending: string[] = [];
  const walk = (v: unknown, path: JsonPath, depth: number): unknown => {
    if (depth > 200) {
      // Reported where the nesting starts to matter, not with a path of 200 segments.
      problems.push({ path: path.slice(0, 4), message: 'nested more than 200 levels deep below this point' });
      return v;
    }
    if (typeof v === 'string') {
      if (!v.includes('${')) return v;
      const r = substituteString(v, env);
      if (r.problem) {
        problems.push({ path, message: r.problem });
        return v;
      }
      if (r.unset.length > 0) {
        pending.push(...r.unset);
        return REMOVE;
      }
      if (r.used.length > 0) substituted.push({ path, variables: [...new Set(r.used)], value: r.value });
      return r.value;
    }
    if (Array.isArray(v)) {
      let removed = false;
      const arr = v.map((item, idx) => {
        const next = walk(item, [...path, idx], depth + 1);
        if (next === REMOVE) removed = true;
        return next;
      });
      // An array cannot lose one element without changing meaning: the whole property goes.
      return removed ? REMOVE : arr;
    }
    if (v && typeof v === 'object') {
      const obj: Record<string, unknown> = {};
      for (const [k, item] of Object.entries(v as Record<string, unknown>)) {
        // Never copied (`obj["__proto__"] = x` would set the prototype): parseConfigText refuses them first.
        if (FORBIDDEN_KEYS.has(k)) {
          problems.push({ path: [...path, k], message: `the key "${k}" is not allowed in a configuration` });
          continue;
        }
        const next = walk(item, [...path, k], depth + 1);
        if (next === REMOVE) {
          for (const variable of new Set(pending)) unresolved.push({ variable, path: [...path, k] });
          pending = [];
        } else {
          obj[k] = next;
        }
      }
      return obj;
    }
    return v;
  };

  const result = walk(value, [], 0);
  for (const variable of new Set(pending)) unresolved.push({ variable, path: [] });
  return { value: result === REMOVE ? undefined : result, unresolved, problems, substituted };
}

/** Formats a JSON path as `modes.guard.agent_inputs[0].type`. */
export function formatPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const s = String(seg);
      out += /^[A-Za-z_$][A-Za-z0-9_$]*$/.test(s) ? (out ? `.${s}` : s) : `[${JSON.stringify(s)}]`;
    }
  }
  return out;
}
