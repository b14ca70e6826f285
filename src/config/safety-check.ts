// Checks the motion values a `safety` block names (allowed_values, stop_value, return_value) against the arguments of the mode's motion actions.
import type { z } from 'zod';
import type { AgentConfig } from './schema.js';
import type { PluginDescriptors } from '../plugins/index.js';

export interface SafetyValueProblem {
  path: Array<PropertyKey>;
  message: string;
}

/** The one field of an action's arguments (`move`: `action`), or undefined when there is not exactly one. */
function soleField(args: z.ZodType): { key: string; options?: readonly unknown[] } | undefined {
  const shape = (args as unknown as { shape?: Record<string, z.ZodType> }).shape;
  const keys = shape ? Object.keys(shape) : [];
  if (keys.length !== 1) return undefined;
  const options = (shape![keys[0]!] as unknown as { options?: readonly unknown[] }).options;
  return { key: keys[0]!, ...(options ? { options } : {}) };
}

/**
 * A value no motion action of a mode accepts is a problem where it is written (the mode's block, or
 * the global one when the mode inherits it): a misspelt `allowed_values` entry would silently refuse
 * that motion, a misspelt `stop_value` would make "stand still" count as motion.
 */
export function checkSafetyValues(config: AgentConfig, descriptors: PluginDescriptors): SafetyValueProblem[] {
  const problems: SafetyValueProblem[] = [];
  const seen = new Set<string>();
  for (const [name, mode] of Object.entries(config.modes)) {
    const motion = mode.agent_actions.filter((a) => descriptors.actions.get(a.name)?.connectors.get(a.connector)?.motion === true);
    if (motion.length === 0) continue;
    type Values = { allowed_values?: string[]; stop_value?: string; return_value?: string };
    const own: Values = mode.safety ?? {};
    const global: Values = config.safety ?? {};
    const values: Array<{ value: string; path: Array<PropertyKey> }> = [];
    const take = (field: 'allowed_values' | 'stop_value' | 'return_value') => {
      const fromMode = own[field] !== undefined;
      const v = fromMode ? own[field] : global[field];
      if (v === undefined) return;
      const base: Array<PropertyKey> = fromMode ? ['modes', name, 'safety', field] : ['safety', field];
      if (Array.isArray(v)) v.forEach((x, i) => values.push({ value: x, path: [...base, i] }));
      else values.push({ value: v as string, path: base });
    };
    take('allowed_values');
    take('stop_value');
    take('return_value');
    for (const { value, path } of values) {
      const key = `${path.join('.')}`;
      if (seen.has(key)) continue;
      const fits = motion.some((a) => {
        const args = descriptors.actions.get(a.name)!.args;
        const field = soleField(args);
        return args.safeParse(field ? { [field.key]: value } : value).success;
      });
      if (fits) continue;
      seen.add(key);
      const known = motion.flatMap((a) => soleField(descriptors.actions.get(a.name)!.args)?.options ?? []).map(String);
      problems.push({
        path,
        message: `"${value}" is not a value of ${motion.map((a) => a.llm_label).join(', ')} in mode ${name}${known.length ? ` (known: ${[...new Set(known)].join(', ')})` : ''}`,
      });
    }
  }
  return problems;
}

/**
 * The obstacle guard and LidarInput read the configuration's `lidar`: without one the guard would be
 * a guard that sees nothing (every motion refused as blind) and the input could not start, so each is
 * a problem where it is written.
 */
export function checkLidarNeeds(config: AgentConfig): SafetyValueProblem[] {
  if (config.lidar) return [];
  const problems: SafetyValueProblem[] = [];
  const fix = 'add a `lidar` block (source "rplidar" with its port, "ros2" with its LaserScan topic, or "sim" for the simulated body)';
  if (config.safety?.obstacle) problems.push({ path: ['safety', 'obstacle'], message: `the obstacle guard needs the robot's lidar: ${fix}` });
  for (const [name, mode] of Object.entries(config.modes)) {
    for (const [list, entries] of [
      ['agent_inputs', mode.agent_inputs],
      ['backgrounds', mode.backgrounds],
    ] as const)
      entries.forEach((e, i) => {
        if (e.type === 'LidarInput') problems.push({ path: ['modes', name, list, i, 'type'], message: `LidarInput reads the robot's lidar: ${fix}` });
      });
  }
  return problems;
}
