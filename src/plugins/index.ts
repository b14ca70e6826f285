// Every plugin this build knows, as descriptors only (no plugin code is loaded): what `check`, `schema` and `doctor` read.
import { actionDescriptors } from './actions.js';
import { inputDescriptors } from './inputs.js';
import { llmDescriptors } from './llms.js';
import { simulatorDescriptors } from './simulators.js';
import type { PluginDescriptors } from './types.js';

export const descriptors: PluginDescriptors = {
  inputs: inputDescriptors,
  actions: actionDescriptors,
  llms: llmDescriptors,
  simulators: simulatorDescriptors,
};

export { Registry } from './registry.js';
export { argsFor, entryDescription } from './args.js';
export type * from './types.js';
