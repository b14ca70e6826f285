// Which plugins a configuration uses: input, model and simulator types, and actions with their connectors (implicit ones included).
import type { ActionConfig } from './schema.js';

/**
 * Actions a mode gets from its flags: `remember_locations: true` adds `remember_location` (connector
 * `state_dir`) unless the mode already lists an action of that name.
 */
export function implicitActions(mode: { remember_locations?: boolean | undefined; agent_actions: ReadonlyArray<{ name: string }> }): ActionConfig[] {
  if (!mode.remember_locations || mode.agent_actions.some((a) => a.name === 'remember_location')) return [];
  return [
    {
      name: 'remember_location',
      llm_label: 'remember_location',
      connector: 'state_dir',
      implementation: 'passthrough',
      config: {},
      exclude_from_prompt: false,
    },
  ];
}

/** The parts of a configuration that name plugins (a loaded AgentConfig has them; tests write them inline). */
export interface PluginUse {
  cortex_llm?: { type: string } | undefined;
  modes: Record<
    string,
    {
      agent_inputs: ReadonlyArray<{ type: string }>;
      /** Context producers: input types run for their context values (src/plugins/backgrounds.ts). */
      backgrounds?: ReadonlyArray<{ type: string }> | undefined;
      agent_actions: ReadonlyArray<{ name: string; connector: string }>;
      simulators: ReadonlyArray<{ type: string }>;
      cortex_llm?: { type: string } | undefined;
      remember_locations?: boolean | undefined;
    }
  >;
}

/** Plugin names a configuration uses, each listed once, in the order first met. */
export interface UsedPlugins {
  inputs: string[];
  llms: string[];
  /** Action name -> connector names. */
  actions: Map<string, string[]>;
  simulators: string[];
}

export function usedPlugins(config: PluginUse): UsedPlugins {
  const inputs = new Set<string>();
  const llms = new Set<string>();
  const simulators = new Set<string>();
  const actions = new Map<string, string[]>();
  if (config.cortex_llm) llms.add(config.cortex_llm.type);
  for (const mode of Object.values(config.modes)) {
    for (const i of [...mode.agent_inputs, ...(mode.backgrounds ?? [])]) inputs.add(i.type);
    for (const s of mode.simulators) simulators.add(s.type);
    if (mode.cortex_llm) llms.add(mode.cortex_llm.type);
    for (const a of [...mode.agent_actions, ...implicitActions(mode)]) {
      const connectors = actions.get(a.name) ?? [];
      if (!connectors.includes(a.connector)) connectors.push(a.connector);
      actions.set(a.name, connectors);
    }
  }
  return { inputs: [...inputs], llms: [...llms], actions, simulators: [...simulators] };
}
