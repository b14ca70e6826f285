// The loaded half of the plugins: loaders of their code, and the lookups the agent gets for the plugins one configuration uses.
import type { ConnectorFactory } from './action.js';
import type { SimulatorFactory } from './simulator.js';
import type { InputFactory } from './input.js';
import type { LlmFactory } from './llm.js';
import type { ActionDescriptor, ConnectorDescriptor, InputDescriptor, LlmDescriptor, PluginDescriptors, SimulatorDescriptor } from '../plugins/types.js';

/** Loads a plugin's code (a dynamic `import()`), resolving its factory. */
export type Loader<Factory> = () => Promise<Factory>;

/** The code half of every plugin, by the same names as the descriptors; connectors by action, then connector. */
export interface PluginLoaders {
  inputs: Record<string, Loader<InputFactory>>;
  llms: Record<string, Loader<LlmFactory>>;
  connectors: Record<string, Record<string, Loader<ConnectorFactory>>>;
  simulators: Record<string, Loader<SimulatorFactory>>;
}

/** Descriptors paired with loaders (built by `pluginRegistry`, which checks that both name the same plugins). */
export interface PluginRegistry {
  readonly descriptors: PluginDescriptors;
  readonly loaders: PluginLoaders;
}

export type InputSpec = InputDescriptor & { create: InputFactory };
export type LlmSpec = LlmDescriptor & { create: LlmFactory };
export type ConnectorSpec = ConnectorDescriptor & { create: ConnectorFactory };
export type SimulatorSpec = SimulatorDescriptor & { create: SimulatorFactory };

/**
 * The plugins one configuration uses, loaded (`resolvePlugins`): synchronous lookups for the agent.
 * Each lookup throws a PluginError naming the type and the known names when the type is unknown, or
 * the loaded names when it is known but the configuration given to `resolvePlugins` does not use it.
 */
export interface Plugins {
  /** Descriptors of every plugin the registry knows, loaded or not (tool schemas, prompt descriptions). */
  readonly descriptors: PluginDescriptors;
  input(type: string): InputSpec;
  llm(type: string): LlmSpec;
  action(name: string): ActionDescriptor;
  connector(action: string, connector: string): ConnectorSpec;
  simulator(type: string): SimulatorSpec;
}
