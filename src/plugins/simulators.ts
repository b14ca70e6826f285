// Descriptor of the WebSim simulator: config schema only (it listens on loopback and needs no device); the code is in src/websim/.
import { descriptor } from './define.js';
import { Registry } from './registry.js';
import { WebSimOptions } from './schemas/websim.js';
import type { SimulatorDescriptor } from './types.js';

export const webSim = descriptor({
  type: 'WebSim',
  description: 'a live local web page of the running agent: mode statechart, inputs, model, actions, face; switch modes and type text',
  schema: WebSimOptions,
});

/** Simulators, by `simulators[].type`. */
export const simulatorDescriptors = new Registry<SimulatorDescriptor>('simulator', [webSim]);
