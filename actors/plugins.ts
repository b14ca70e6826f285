// The concrete plugins handed to the agent: the registries of inputs, models, actions and simulators, read by type name.
import { actions, inputs, llms, simulators } from '../src/plugins.js';
import type { AgentOptions } from './agent.js';

/** The plugins of this build, as the agent reads them. */
export function builtinPlugins(): AgentOptions['plugins'] {
  return {
    input: (type) => inputs.get(type),
    llm: (type) => llms.get(type),
    action: (name) => actions.get(name),
    simulator: (type) => simulators.get(type),
    unknown: (kind, type) => ({ input: inputs, llm: llms, action: actions, simulator: simulators })[kind].unknownMessage(type),
  };
}
