// The robot's local reload policy, and the check a pushed configuration passes before it replaces the running one
// The policy says whether the fleet may reload the robot, and which programs a pushed configuration may start.
import JSON5 from 'json5';
import { CortexError } from '../errors.js';
import { readRegularFile } from '../config/read-file.js';
import { AllowedPrograms, describeUse, refusedPrograms, type AllowedProgram } from '../config/program-guard.js';
import type { AgentConfig, LoadedConfig } from '../config/schema.js';
import type { CommandResult } from './execute.js';

/** Environment variables of the policy (systemd/cortexd.env.example): they live on the robot, never in a pushed file. */
export const RELOAD_ENV = {
  /** `off` (or 0, false, no) refuses every fleet `reload`; `on` accepts them (the file's `fleet.reload` otherwise). */
  reload: 'CORTEX_FLEET_RELOAD',
  /** A JSON5 file of allowed programs: an array of entries, or `{ allowed_programs: [...] }`. */
  allowlist: 'CORTEX_ALLOWED_PROGRAMS',
} as const;

/** What the robot decided locally, at start: a pushed configuration never changes it. */
export interface ReloadPolicy {
  fleetReload: boolean;
  /** Where the fleet-reload decision came from (for the refusal). */
  reloadFrom: string;
  allow: AllowedProgram[];
  /** Where the allowlist came from (for the refusal and the log). */
  allowFrom: string[];
}

/** The policy file or variable is unusable: the agent does not start (a broken allowlist is not an empty one in disguise). */
export class ReloadPolicyError extends CortexError {
  constructor(message: string) {
    super('reload_policy', message);
    this.name = 'ReloadPolicyError';
  }
}

const MAX_ALLOWLIST_BYTES = 256 * 1024;

function readAllowlistFile(path: string): AllowedProgram[] {
  let data: unknown;
  try {
    data = JSON5.parse(readRegularFile(path, MAX_ALLOWLIST_BYTES));
  } catch (err) {
    throw new ReloadPolicyError(`${RELOAD_ENV.allowlist}=${path}: ${(err as Error).message}`);
  }
  const list = data && typeof data === 'object' && !Array.isArray(data) ? (data as { allowed_programs?: unknown }).allowed_programs : data;
  const r = AllowedPrograms.safeParse(list);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new ReloadPolicyError(
      `${RELOAD_ENV.allowlist}=${path}: [${issue.path.join('.')}] ${issue.message} (an entry is { program, args, env } or { function, args })`,
    );
  }
  return r.data;
}

/** Reads the policy from the robot's startup configuration and its environment; throws ReloadPolicyError when either is unusable. */
export function readReloadPolicy(startup: AgentConfig, env: Record<string, string | undefined> = process.env): ReloadPolicy {
  const block = startup.fleet;
  let fleetReload = block?.reload ?? true;
  let reloadFrom = block?.reload === undefined ? 'the default' : 'fleet.reload of the startup configuration';
  const v = env[RELOAD_ENV.reload]?.trim().toLowerCase();
  if (v) {
    if (['0', 'off', 'false', 'no'].includes(v)) fleetReload = false;
    else if (['1', 'on', 'true', 'yes'].includes(v)) fleetReload = true;
    else throw new ReloadPolicyError(`${RELOAD_ENV.reload}: "${v.slice(0, 20)}" is neither on nor off`);
    reloadFrom = RELOAD_ENV.reload;
  }
  const allow: AllowedProgram[] = [...(block?.allowed_programs ?? [])];
  const allowFrom: string[] = allow.length > 0 ? ['fleet.allowed_programs of the startup configuration'] : [];
  const file = env[RELOAD_ENV.allowlist]?.trim();
  if (file) {
    allow.push(...readAllowlistFile(file));
    allowFrom.push(`${RELOAD_ENV.allowlist}=${file}`);
  }
  return { fleetReload, reloadFrom, allow, allowFrom };
}

/** The refusal of a fleet reload when the robot turned reload off; undefined when allowed. */
export function fleetReloadRefusal(policy: ReloadPolicy): CommandResult | undefined {
  if (policy.fleetReload) return undefined;
  return { ok: false, reason: `fleet reload is turned off on this robot (${policy.reloadFrom}); the running configuration is kept` };
}

/**
 * Checks a configuration that did not come from the robot's own files: every program it could start
 * must be named by the local allowlist. Refused, the reply names each program and where it is written,
 * and nothing of the new configuration has started.
 */
export function programRefusal(next: AgentConfig, policy: ReloadPolicy, running: string): CommandResult | undefined {
  const refused = refusedPrograms(next, policy.allow);
  if (refused.length === 0) return undefined;
  const n = refused.length;
  const where =
    policy.allowFrom.length > 0 ? policy.allowFrom.join(', ') : `none: set ${RELOAD_ENV.allowlist} or fleet.allowed_programs in the robot's own file`;
  return {
    ok: false,
    reason: `the new configuration would start ${n} program${n === 1 ? '' : 's'} this robot does not allow (allowlist: ${where}); ${running} keeps running`,
    lines: refused.map(describeUse),
  };
}

/**
 * A pushed configuration may read the robot's environment (`${VAR}`) only where the running one
 * does: the same variable at the same place. Otherwise a pushed file could move a secret of the
 * robot (an API key, a password) into a field that sends it elsewhere (an MCP server's header, a
 * URL, a prompt). Refused with each place and variable named, never the value.
 */
export function variableRefusal(next: Pick<LoadedConfig, 'variables'>, running: Pick<LoadedConfig, 'variables' | 'configName'>): CommandResult | undefined {
  const allowed = new Set((running.variables ?? []).flatMap((u) => u.names.map((n) => `${u.path}\u0000${n}`)));
  const refused = (next.variables ?? []).flatMap((u) => u.names.filter((n) => !allowed.has(`${u.path}\u0000${n}`)).map((n) => `${u.path}: \${${n}}`));
  if (refused.length === 0) return undefined;
  const n = refused.length;
  return {
    ok: false,
    reason: `the new configuration reads ${n} environment variable${n === 1 ? '' : 's'} of this robot where ${running.configName} does not (a pushed configuration may use \${VAR} only where the robot's own file does); ${running.configName} keeps running`,
    lines: refused.map((r) => `${r} is not read there by this robot's own configuration`),
  };
}

export { destinationRefusal } from './secret-destinations.js';
