// Checks that need the whole configuration: mode references, rule targets, duplicate labels, hook placement.
import type { AgentConfig, HookConfig } from './schema.js';
import { locateHookModule } from './hook-module.js';
import { didYouMean } from '../plugins/suggest.js';

export interface CrossProblem {
  path: Array<PropertyKey>;
  message: string;
}

/** A name as it appears in messages: quoted, escaped (never a line break), at most 60 characters. */
function q(name: string): string {
  return JSON.stringify(name.length > 60 ? `${name.slice(0, 57)}...` : name);
}

/** Problems that a field-by-field schema cannot see. */
export function crossCheck(config: AgentConfig): CrossProblem[] {
  const problems: CrossProblem[] = [];
  const modeNames = Object.keys(config.modes);
  const known = `known modes: ${modeNames.map(q).join(', ')}`;
  // Own keys only: a name such as "constructor" or "toString" must not resolve through Object.prototype.
  const isMode = (name: string) => Object.hasOwn(config.modes, name);

  if (!isMode(config.default_mode)) {
    problems.push({ path: ['default_mode'], message: `${q(config.default_mode)} is not a mode; ${known}${didYouMean(config.default_mode, modeNames)}` });
  }
  if (isMode('*')) problems.push({ path: ['modes', '*'], message: '"*" is reserved for rules that apply from any mode' });

  config.transition_rules.forEach((rule, i) => {
    if (rule.from_mode !== '*' && !isMode(rule.from_mode)) {
      problems.push({
        path: ['transition_rules', i, 'from_mode'],
        message: `${q(rule.from_mode)} is not a mode ("*" means any mode); ${known}${didYouMean(rule.from_mode, modeNames)}`,
      });
    }
    if (!isMode(rule.to_mode)) {
      problems.push({ path: ['transition_rules', i, 'to_mode'], message: `${q(rule.to_mode)} is not a mode; ${known}${didYouMean(rule.to_mode, modeNames)}` });
    }
    if (rule.transition_type === 'manual' && !config.allow_manual_switching) {
      problems.push({ path: ['transition_rules', i, 'transition_type'], message: 'a manual rule needs allow_manual_switching: true' });
    }
  });

  config.global_lifecycle_hooks.forEach((hook, i) => {
    if (hook.hook_type !== 'on_startup' && hook.hook_type !== 'on_shutdown') {
      problems.push({
        path: ['global_lifecycle_hooks', i, 'hook_type'],
        message: `global hooks run at start and stop only (on_startup, on_shutdown); put ${hook.hook_type} hooks in a mode's lifecycle_hooks`,
      });
    }
  });

  for (const [name, mode] of Object.entries(config.modes)) {
    const labels = new Map<string, number>();
    mode.agent_actions.forEach((action, i) => {
      const first = labels.get(action.llm_label);
      if (first !== undefined) {
        problems.push({
          path: ['modes', name, 'agent_actions', i, 'llm_label'],
          message: `${q(action.llm_label)} is already used by agent_actions[${first}]; the model could not tell them apart`,
        });
      } else {
        labels.set(action.llm_label, i);
      }
    });
    problems.push(...dependencyProblems(name, mode, [...labels.keys()]));
    const servers = new Set<string>();
    mode.mcp_servers.forEach((server, i) => {
      if (servers.has(server.name)) problems.push({ path: ['modes', name, 'mcp_servers', i, 'name'], message: `duplicate tool server name ${q(server.name)}` });
      servers.add(server.name);
    });
    if (mode.timeout_seconds === undefined) {
      const timed = config.transition_rules.findIndex((r) => r.transition_type === 'time_based' && r.from_mode === name && r.timeout_seconds === undefined);
      if (timed >= 0) {
        problems.push({ path: ['transition_rules', timed, 'timeout_seconds'], message: `a time_based rule needs timeout_seconds here or in mode ${q(name)}` });
      }
    }
  }
  return problems;
}

/**
 * Function hooks whose module cannot be found (or whose names are not allowed), as warnings: the
 * hook fails when it runs, and its on_failure decides what that means. Modules are not loaded here,
 * so checking a configuration never runs its code.
 */
export function hookModuleWarnings(config: AgentConfig, hooksDir: string): CrossProblem[] {
  const out: CrossProblem[] = [];
  const visit = (hooks: HookConfig[], at: Array<PropertyKey>) =>
    hooks.forEach((hook, i) => {
      if (hook.handler_type !== 'function') return;
      const cfg = hook.handler_config;
      const where = locateHookModule(hooksDir, cfg.module_name, cfg.function ?? '');
      if (!where.ok) out.push({ path: [...at, i, 'handler_config'], message: `${where.message}; the hook will fail when it runs` });
    });
  visit(config.global_lifecycle_hooks, ['global_lifecycle_hooks']);
  for (const [name, mode] of Object.entries(config.modes)) visit(mode.lifecycle_hooks, ['modes', name, 'lifecycle_hooks']);
  return out;
}

/**
 * `action_dependencies` names actions of its mode, has no cycle, and is read only with
 * `action_execution_mode: dependencies` (anywhere else it would be silently ignored).
 */
function dependencyProblems(name: string, mode: AgentConfig['modes'][string], labels: string[]): CrossProblem[] {
  const problems: CrossProblem[] = [];
  const deps = mode.action_dependencies ?? {};
  const at = (...rest: PropertyKey[]) => ['modes', name, 'action_dependencies', ...rest];
  if (Object.keys(deps).length && mode.action_execution_mode !== 'dependencies') {
    problems.push({
      path: at(),
      message: `read only with action_execution_mode: "dependencies" (this mode's is ${q(mode.action_execution_mode ?? 'concurrent')}); set it or remove action_dependencies`,
    });
  }
  const isLabel = (l: string) => labels.includes(l);
  const knownLabels = `the mode's action labels: ${labels.map(q).join(', ') || 'none'}`;
  for (const [label, needs] of Object.entries(deps)) {
    if (!isLabel(label)) problems.push({ path: at(label), message: `${q(label)} is not an action of this mode; ${knownLabels}${didYouMean(label, labels)}` });
    needs.forEach((need, i) => {
      if (!isLabel(need)) problems.push({ path: at(label, i), message: `${q(need)} is not an action of this mode; ${knownLabels}${didYouMean(need, labels)}` });
      else if (need === label) problems.push({ path: at(label, i), message: `${q(label)} cannot wait for itself` });
    });
  }
  // A cycle would make its actions wait for each other forever.
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (label: string, trail: string[]): string[] | undefined => {
    if (state.get(label) === 'done') return undefined;
    if (state.get(label) === 'visiting') return [...trail.slice(trail.indexOf(label)), label];
    state.set(label, 'visiting');
    for (const need of Object.hasOwn(deps, label) ? deps[label]! : []) {
      if (need === label) continue;
      const cycle = visit(need, [...trail, label]);
      if (cycle) return cycle;
    }
    state.set(label, 'done');
    return undefined;
  };
  for (const label of Object.keys(deps)) {
    const cycle = visit(label, []);
    if (cycle) {
      problems.push({ path: at(label), message: `dependency cycle ${cycle.map(q).join(' -> ')}: these actions would wait for each other forever` });
      break;
    }
  }
  return problems;
}
