// Loaded plugins for tests that build action handles directly: every built-in action with every connector (or a given registry's).
import type { ActionConfig } from '../../src/config/schema.js';
import { builtinPlugins, resolvePlugins, type PluginRegistry, type Plugins } from '../../actors/plugins.js';

/** An `agent_actions` entry with defaults, as the loader makes it. */
export const actionEntry = (name: string, connector: string, config: Record<string, unknown> = {}): ActionConfig => ({
  name,
  llm_label: name,
  connector,
  implementation: 'passthrough',
  config,
  exclude_from_prompt: false,
});

/** Loads every connector of every action `registry` knows (one mode listing them all). */
export function allActionPlugins(registry: PluginRegistry = builtinPlugins): Promise<Plugins> {
  const agent_actions = registry.descriptors.actions.all().flatMap((a) => a.connectors.names().map((c) => actionEntry(a.type, c)));
  return resolvePlugins(registry, { modes: { all: { agent_inputs: [], agent_actions, simulators: [] } } });
}
