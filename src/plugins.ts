// The one place that maps configuration type names to plugins: inputs, actions and connectors, LLMs, simulators.
import { z } from 'zod';
import { Registry, type PluginSpec } from './plugin-registry.js';
import type { InputFactory } from './cortex/input.js';

/**
 * An action plugin (`name` in an action entry, such as `speak`) and the connectors that implement it
 * (`connector`, such as `local_tts`). Factories are typed by the agent runtime that calls them.
 */
export interface ActionPluginSpec extends PluginSpec<unknown> {
  connectors: Registry<unknown>;
}

/** Input plugins, by `agent_inputs[].type`. */
export const inputs = new Registry<InputFactory>('input', []);

/** Action plugins, by `agent_actions[].name`; each holds its connectors. */
export const actions = new Registry<unknown, ActionPluginSpec>('action', []);

/** Model plugins, by `cortex_llm.type`. */
export const llms = new Registry<unknown>('llm', []);

/** Simulators, by `simulators[].type`. */
export const simulators = new Registry<unknown>('simulator', []);

/** A schema for plugins whose options are not typed yet: any object. */
export const AnyOptions = z.record(z.string(), z.unknown());
