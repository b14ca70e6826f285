// The one place that maps configuration type names to plugins: inputs, actions and connectors, LLMs, simulators.
import { Registry } from './plugin-registry.js';
import type { InputFactory } from './cortex/input.js';
import type { ActionPluginSpec } from './cortex/action.js';
import type { LlmFactory } from './cortex/llm.js';
import { cloudLlmSpec } from './cortex/llm/cloud-llm.js';
import { localLlmSpec } from './cortex/llm/local-llm.js';
import { multiLlmSpec } from './cortex/llm/multi-llm.js';
import { faceAction, moveAction, rememberLocationAction, speakAction } from '../actors/actions/catalog.js';
import { textInputSpec } from '../actors/inputs/text-input.js';
import { speechbAsrInputSpec, speechlabAsrInputSpec } from '../actors/inputs/asr-input.js';
import { vlmInputSpec } from '../actors/inputs/vlm-input.js';
import { localVlmInputSpec } from '../actors/inputs/local-vlm-input.js';
import { serialReaderSpec } from '../actors/inputs/serial-reader.js';
import { gpsInputSpec } from '../actors/inputs/gps-input.js';
import { batteryInputSpec } from '../actors/inputs/battery-input.js';
import type { SimulatorFactory } from './cortex/contracts.js';
import { webSimSpec } from './websim/plugin.js';

/** Input plugins, by `agent_inputs[].type`. */
export const inputs = new Registry<InputFactory>('input', [
  textInputSpec,
  speechlabAsrInputSpec,
  speechbAsrInputSpec,
  vlmInputSpec,
  localVlmInputSpec,
  serialReaderSpec,
  gpsInputSpec,
  batteryInputSpec,
]);

/** Action plugins, by `agent_actions[].name`; each holds its connectors. */
export const actions = new Registry<never, ActionPluginSpec>('action', [speakAction, moveAction, faceAction, rememberLocationAction]);

/** Model plugins, by `cortex_llm.type`. */
export const llms = new Registry<LlmFactory>('llm', [cloudLlmSpec, localLlmSpec, multiLlmSpec]);

/** Simulators, by `simulators[].type`. */
export const simulators = new Registry<SimulatorFactory>('simulator', [webSimSpec]);
