// Resolves every plugin type of a configuration through the plugin descriptors (no plugin code) and validates its config block.
import type { z } from 'zod';
import { type UnknownField, unknownFields, zodIssueMessages } from './issues.js';
import type { AgentConfig } from './schema.js';
import { checkLidarNeeds, checkSafetyValues } from './safety-check.js';
import { checkActionHooks } from './hooks-check.js';
import { descriptors as builtin } from '../plugins/index.js';
import { BACKGROUND_TYPES, notABackground } from '../plugins/backgrounds.js';
import type { PluginDescriptors, PluginInfo, Registry } from '../plugins/index.js';

export interface PluginProblem {
  path: Array<PropertyKey>;
  message: string;
  unknownType: boolean;
}

export interface PluginCheck {
  problems: PluginProblem[];
  unknownFields: UnknownField[];
}

/** Checks inputs, actions (and their connectors), models and simulators of every mode and the global model. */
export function checkPlugins(config: AgentConfig, descriptors: PluginDescriptors = builtin): PluginCheck {
  const { inputs, actions, llms, simulators } = descriptors;
  const result: PluginCheck = { problems: [], unknownFields: [] };

  const check = (registry: Registry<PluginInfo>, type: string, options: unknown, at: Array<PropertyKey>, typeField: string) => {
    const spec = registry.get(type);
    if (!spec) {
      result.problems.push({ path: [...at, typeField], message: registry.unknownMessage(type), unknownType: true });
      return undefined;
    }
    // Once per entry: zod's compiled fast path would cost more than it saves (see load.ts).
    const parsed = spec.schema.safeParse(options ?? {}, { reportInput: true, jitless: true });
    if (!parsed.success) {
      for (const m of zodIssueMessages(parsed.error, [...at, 'config'])) result.problems.push({ path: m.path, message: m.message, unknownType: false });
    }
    // Also beside other problems: a misspelt field is the likely cause of a "missing" one.
    result.unknownFields.push(...unknownFields(spec.schema as z.ZodType, options ?? {}, [...at, 'config']));
    return spec;
  };

  if (config.cortex_llm) check(llms, config.cortex_llm.type, config.cortex_llm.config, ['cortex_llm'], 'type');
  for (const [name, mode] of Object.entries(config.modes)) {
    const base = ['modes', name];
    mode.agent_inputs.forEach((input, i) => check(inputs, input.type, input.config, [...base, 'agent_inputs', i], 'type'));
    (mode.backgrounds ?? []).forEach((b, i) => {
      if (!BACKGROUND_TYPES.has(b.type) && !inputs.get(b.type)) check(inputs, b.type, b.config, [...base, 'backgrounds', i], 'type');
      else if (!BACKGROUND_TYPES.has(b.type))
        result.problems.push({ path: [...base, 'backgrounds', i, 'type'], message: notABackground(b.type), unknownType: false });
      else check(inputs, b.type, b.config, [...base, 'backgrounds', i], 'type');
    });
    mode.simulators.forEach((sim, i) => check(simulators, sim.type, sim.config, [...base, 'simulators', i], 'type'));
    if (mode.cortex_llm) check(llms, mode.cortex_llm.type, mode.cortex_llm.config, [...base, 'cortex_llm'], 'type');
    mode.agent_actions.forEach((action, i) => {
      const at = [...base, 'agent_actions', i];
      const spec = actions.get(action.name);
      if (!spec) {
        result.problems.push({ path: [...at, 'name'], message: actions.unknownMessage(action.name), unknownType: true });
        return;
      }
      check(spec.connectors, action.connector, action.config, at, 'connector');
    });
  }
  for (const p of checkSafetyValues(config, descriptors)) result.problems.push({ ...p, unknownType: false });
  for (const p of checkLidarNeeds(config)) result.problems.push({ ...p, unknownType: false });
  for (const p of checkActionHooks(config, descriptors)) result.problems.push({ ...p, unknownType: false });
  return result;
}
