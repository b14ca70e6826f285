// What a plugin is before its code loads (descriptor: name, config schema, device needs) and the loaded form the agent receives.
import type { z } from 'zod';
import type { AddressKey } from '../cloud/addresses.js';
import type { PluginKind, Registry } from './registry.js';

export type { PluginKind };

/**
 * One thing a plugin needs from the machine it runs on, read from its parsed config block. Simulated
 * bindings (microphone replay, file or synthetic camera, serialport mock, file or null speaker) need
 * nothing. `service` is an address of the hosted API (or the embedded service); `network` is another
 * server the plugin calls (a LocalLLM's `base_url`).
 */
export type DeviceNeed =
  | { kind: 'microphone'; recorder: string; device?: string }
  | { kind: 'camera'; device: number | string }
  | { kind: 'serial'; path: string }
  | { kind: 'speaker'; player?: string; device?: string }
  | { kind: 'service'; address: AddressKey }
  | { kind: 'network'; url: string };

/** What `cortexd check` and `cortexd schema` know of a plugin. */
export interface PluginInfo {
  /** The name a configuration uses (`type`, `connector`, action `name`). */
  type: string;
  /** One line for `cortexd check`, the JSON Schema and the prompt. */
  description: string;
  /** Validates the entry's `config` block before anything starts. */
  schema: z.ZodType;
}

/** A plugin's cheap half: imports zod and schema modules only, never the plugin's code. */
export interface Descriptor extends PluginInfo {
  /** The devices and services an entry with this `config` block uses; [] for a block the schema refuses. */
  needs(config: unknown): DeviceNeed[];
}

export interface InputDescriptor extends Descriptor {
  /** The input accepts typed text: the terminal's and WebSim's text box reach the mode through it. */
  typedText?: boolean;
}
export type LlmDescriptor = Descriptor;
export type SimulatorDescriptor = Descriptor;

export interface ConnectorDescriptor extends Descriptor {
  /** True when the connector moves the robot's body (the safety governor sits in front of these). */
  motion: boolean;
}

/**
 * An action: `type` is its `name` in a configuration; `schema` validates options every connector
 * accepts; `args` is the zod schema of the tool-call arguments the model sends (it becomes the tool's
 * JSON schema); `queue` says what happens to a new command while one runs: `queue` (speak: utterances
 * wait their turn) or `latest` (move, face: only the newest pending command is kept).
 */
export interface ActionDescriptor extends PluginInfo {
  args: z.ZodType;
  /**
   * For an action whose arguments an entry declares in its `config` block (ros2_publish): the entry's
   * arguments. Absent: every entry takes `args`. Read through `argsFor`.
   */
  argsOf?: (config: unknown) => z.ZodType;
  queue: 'queue' | 'latest';
  connectors: Registry<ConnectorDescriptor>;
}

/** Every plugin a build knows, by kind. */
export interface PluginDescriptors {
  inputs: Registry<InputDescriptor>;
  actions: Registry<ActionDescriptor>;
  llms: Registry<LlmDescriptor>;
  simulators: Registry<SimulatorDescriptor>;
}
