// Zod schemas of the configuration file (agent-runtime-config.md): every field of the spec's tables, typed.
import { z } from 'zod';
import { describeValue, openObject } from './issues.js';
import type { AddressSettings } from '../cloud/addresses.js';
import { ModeSafety, SafetyConfig } from './safety.js';
import { LidarConfig } from './lidar.js';
import { FleetBlock, type FleetSettings } from './fleet.js';
import { KnowledgeBaseBlock, MemoryBlock } from './memory.js';

// Objects are loose: unknown fields are kept (and reported as warnings by the loader), never dropped.

/** A plugin's own options: validated later by the plugin's schema from the registry. */
export const PluginConfig = z.record(z.string(), z.unknown());

/** Loop frequency in Hz; the runtime supports 0.001 (one tick in 1000 s) to 100. */
export const Hertz = z.number().min(0.001, 'must be at least 0.001 Hz').max(100, 'must be at most 100 Hz');

export const HOOK_TYPES = ['on_startup', 'on_shutdown', 'on_entry', 'on_exit', 'on_timeout'] as const;
export const HANDLER_TYPES = ['message', 'command', 'function', 'action'] as const;
export const ON_FAILURE = ['log', 'ignore', 'abort'] as const;
export const TRANSITION_TYPES = ['input_triggered', 'time_based', 'context_aware', 'manual'] as const;
export const MCP_TRANSPORTS = ['stdio', 'sse', 'http'] as const;

/** `handler_config`: one of `message`, `command`, `function`, `action` as a string (plus OM1's aliases). */
export const HandlerConfig = z.looseObject({
  message: z.string().optional(),
  command: z.string().optional(),
  /** Function name; with `module_name`, or written `module.function`. Modules live in `config/hooks/`. */
  function: z.string().optional(),
  module_name: z.string().optional(),
  /** Action of the mode, by `llm_label` or `name`; `action_type` is accepted as an alias. */
  action: z.string().optional(),
  action_type: z.string().optional(),
  /** Value handed to the action (`action` handler); `action_config` is accepted as an alias. */
  value: z.unknown().optional(),
  action_config: z.unknown().optional(),
  /** Arguments for a `function` handler, passed with the hook context. */
  args: z.unknown().optional(),
});

const HANDLER_FIELD: Record<(typeof HANDLER_TYPES)[number], readonly string[]> = {
  message: ['message'],
  command: ['command'],
  function: ['function'],
  action: ['action', 'action_type'],
};

export const LifecycleHook = z
  .looseObject({
    hook_type: z.enum(HOOK_TYPES),
    handler_type: z.enum(HANDLER_TYPES),
    handler_config: HandlerConfig,
    priority: z.number().int().default(0),
    async_execution: z.boolean().default(false),
    /** Seconds; a hook is cancelled when it runs longer. Default 5. */
    timeout_seconds: z.number().positive().default(5),
    on_failure: z.enum(ON_FAILURE).default('log'),
  })
  .superRefine((hook, ctx) => {
    const fields = HANDLER_FIELD[hook.handler_type];
    const cfg = hook.handler_config as Record<string, unknown>;
    if (!fields.some((f) => typeof cfg[f] === 'string' && (cfg[f] as string).length > 0)) {
      ctx.addIssue({
        code: 'custom',
        path: ['handler_config', fields[0]!],
        message: `a ${hook.handler_type} handler needs handler_config.${fields[0]} (a non-empty string)`,
      });
    }
  });

/** A context condition: a value (equality), a list (membership), or an operator object. */
export const ContextCondition = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.unknown()),
  z
    .strictObject({
      min: z.number().optional(),
      max: z.number().optional(),
      contains: z.union([z.string(), z.number(), z.boolean()]).optional(),
      one_of: z.array(z.unknown()).optional(),
      not: z.unknown().optional(),
    })
    .refine((o) => Object.keys(o).length > 0, 'an operator object needs one of min, max, contains, one_of, not'),
]);

export const TransitionRule = z
  .looseObject({
    from_mode: z.string().min(1),
    to_mode: z.string().min(1),
    transition_type: z.enum(TRANSITION_TYPES),
    trigger_keywords: z.array(z.string().min(1, 'a keyword cannot be empty')).default([]),
    priority: z.number().int(),
    /** Seconds before this rule can fire again; kept per rule, also for `*` rules. */
    cooldown_seconds: z.number().nonnegative().optional(),
    /** time_based only: seconds in the source mode before the rule fires; default the mode's timeout_seconds. */
    timeout_seconds: z.number().positive().optional(),
    context_conditions: z.record(z.string(), ContextCondition).optional(),
  })
  .superRefine((rule, ctx) => {
    if (rule.transition_type === 'input_triggered' && rule.trigger_keywords.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['trigger_keywords'], message: 'an input_triggered rule needs at least one keyword' });
    }
    if (rule.transition_type === 'context_aware' && !rule.context_conditions) {
      ctx.addIssue({ code: 'custom', path: ['context_conditions'], message: 'a context_aware rule needs context_conditions' });
    }
  });

export const LlmEntry = z.looseObject({
  type: z.string().min(1),
  /** Plugin options; the fields named here are common to model plugins, the plugin's schema checks the rest. */
  config: openObject(
    z.looseObject({
      base_url: z.string().optional(),
      api_key: z.string().optional(),
      agent_name: z.string().optional(),
      history_length: z.number().int().nonnegative().optional(),
      /** The runtime's: false calls the model on every tick, even when no input has anything new (default true). */
      skip_idle: z.boolean().optional(),
    }),
  ).default({}),
  agent_name: z.string().optional(),
  history_length: z.number().int().nonnegative().optional(),
});

export const InputEntry = z.looseObject({ type: z.string().min(1), config: PluginConfig.default({}) });
export const SimulatorEntry = z.looseObject({ type: z.string().min(1), config: PluginConfig.default({}) });

export const ActionEntry = z.looseObject({
  name: z.string().min(1),
  llm_label: z.string().min(1),
  implementation: z.string().default('passthrough'),
  connector: z.string().min(1),
  config: PluginConfig.default({}),
  exclude_from_prompt: z.boolean().default(false),
});

export const McpServer = z
  .looseObject({
    name: z.string().min(1),
    transport: z.enum(MCP_TRANSPORTS),
    command: z.string().min(1).optional(),
    args: z.array(z.string()).default([]),
    /** Working directory of a stdio server; relative to the configuration's directory, which is the default. */
    cwd: z.string().min(1).optional(),
    env: z.record(z.string(), z.string()).default({}),
    url: z.string().optional(),
    headers: z.record(z.string(), z.string()).default({}),
  })
  .superRefine((s, ctx) => {
    if (s.transport === 'stdio' && !s.command) {
      ctx.addIssue({ code: 'custom', path: ['command'], message: 'a stdio tool server needs command' });
    }
    if (s.transport !== 'stdio') {
      if (!s.url) ctx.addIssue({ code: 'custom', path: ['url'], message: `url is required for transport ${s.transport}` });
      else if (!URL.canParse(s.url)) ctx.addIssue({ code: 'custom', path: ['url'], message: `not a URL: ${describeValue(s.url)}` });
    }
  });

/**
 * A mode. The spec marks every field but mcp_servers required; the real-world corpus omits
 * timeout_seconds, remember_locations, save_interactions, lifecycle_hooks, simulators and
 * cortex_llm routinely, so those take documented defaults (no timeout, false, [], the global model).
 */
export const Mode = z.looseObject({
  display_name: z.string(),
  description: z.string(),
  system_prompt_base: z.string(),
  hertz: Hertz,
  /** Seconds in this mode before on_timeout hooks run and time_based rules fire; absent: never. */
  timeout_seconds: z.number().positive().optional(),
  remember_locations: z.boolean().default(false),
  save_interactions: z.boolean().default(false),
  agent_inputs: z.array(InputEntry).default([]),
  agent_actions: z.array(ActionEntry).default([]),
  /**
   * Context producers that run with the mode (OM1's backgrounds): an input type that publishes context
   * values (src/plugins/backgrounds.ts), run for those values only (no prompt line, never wakes the
   * model), supervised and restarted with the backoff by actors/backgrounds/supervisor.ts.
   */
  backgrounds: z.array(InputEntry).default([]),
  /**
   * How the actions of one model answer run (OM1's field): `concurrent` (default: each action's queue
   * runs at once), `sequential` (each waits for the one before it, in the answer's order), or
   * `dependencies` (an action waits for the labels `action_dependencies` gives it). actors/actions/ordering.ts.
   */
  action_execution_mode: z.enum(['concurrent', 'sequential', 'dependencies']).default('concurrent'),
  /** With `dependencies`: llm_label -> the labels it waits for when they are in the same answer. */
  action_dependencies: z.record(z.string(), z.array(z.string())).default({}),
  lifecycle_hooks: z.array(LifecycleHook).default([]),
  simulators: z.array(SimulatorEntry).default([]),
  /** Filled from the global cortex_llm at load when absent. */
  cortex_llm: LlmEntry.optional(),
  mcp_servers: z.array(McpServer).default([]),
  /** Motion limits of this mode over the global `safety` block (an extension of the format; src/config/safety.ts). */
  safety: ModeSafety.optional(),
});

/** Addresses of the hosted service; `embedded` means the in-process local service. */
export const ServiceAddresses = z.looseObject({
  base_url: z.string().optional(),
  ws_base_url: z.string().optional(),
  asr_ws_url: z.string().optional(),
  vlm_ws_url: z.string().optional(),
});

/** The multi-mode configuration, the form every file has after legacy conversion. */
export const AgentConfig = z.looseObject({
  /** The JSON Schema editors validate the file with (`config/schema.json`, from `cortexd schema`); the runtime ignores it. */
  $schema: z.string().optional().describe('the JSON Schema that editors validate this file with, e.g. "./schema.json"; ignored by the runtime'),
  version: z.string(),
  /** Global loop frequency; modes carry their own, so optional in multi-mode files. */
  hertz: Hertz.optional(),
  name: z.string().min(1),
  default_mode: z.string().min(1),
  allow_manual_switching: z.boolean(),
  mode_memory_enabled: z.boolean(),
  api_key: z.string(),
  system_prompt_base: z.string().default(''),
  system_governance: z.string(),
  system_prompt_examples: z.string().default(''),
  cortex_llm: LlmEntry.optional(),
  modes: z.record(z.string().min(1), Mode).refine((m) => Object.keys(m).length > 0, 'at least one mode is required'),
  transition_rules: z.array(TransitionRule).default([]),
  /** Global on_startup / on_shutdown hooks (OM1's name for them). */
  global_lifecycle_hooks: z.array(LifecycleHook).default([]),
  URID: z.string().optional(),
  service: ServiceAddresses.default({}),
  /** Motion safety: limits, dead-man timer, geofence, e-stop sources (an extension of the format; src/config/safety.ts). */
  safety: SafetyConfig.optional(),
  /** The robot's 2D lidar (src/config/lidar.ts): free paths for the prompt and the obstacle guard of `safety.obstacle`. */
  lidar: LidarConfig.optional(),
  /** The fleet channel (src/config/fleet.ts); off unless a broker is named here or in CORTEX_MQTT_URL. */
  fleet: FleetBlock.optional(),
  /** Environment variables this file may read besides the documented ones (src/config/variable-policy.ts). */
  allowed_variables: z
    .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'a variable name: letters, digits and _'))
    .optional()
    .describe('environment variables this file may read (${NAME}) besides the documented ones; a secret-named one still only in credential fields'),
  /** A folder of documents the robot answers from (OM1's block; src/config/memory.ts). */
  knowledge_base: KnowledgeBaseBlock.optional(),
  /** What the robot remembers across restarts: facts people tell it, places, conversation summaries. */
  memory: MemoryBlock.optional(),
});

export type AgentConfig = z.infer<typeof AgentConfig>;
export type ModeConfig = z.infer<typeof Mode>;
export type LlmConfig = z.infer<typeof LlmEntry>;
export type InputConfig = z.infer<typeof InputEntry>;
export type ActionConfig = z.infer<typeof ActionEntry>;
export type SimulatorConfig = z.infer<typeof SimulatorEntry>;
export type HookConfig = z.infer<typeof LifecycleHook>;
export type RuleConfig = z.infer<typeof TransitionRule>;
export type McpServerConfig = z.infer<typeof McpServer>;
export type ContextConditionConfig = z.infer<typeof ContextCondition>;

/**
 * A loaded, validated configuration: every mode has its `cortex_llm`, durations are also given
 * in milliseconds (converted once here, so code never multiplies by 1000 again).
 */
export interface LoadedConfig {
  /** Absolute path of the file it came from. */
  file: string;
  /** Name used on the command line (`config/<name>.json5`), or the file's base name. */
  configName: string;
  /** True when the file was a legacy single-mode configuration converted at load. */
  legacy: boolean;
  config: AgentConfig & { modes: Record<string, ModeConfig & { cortex_llm: LlmConfig }> };
  /** The API key after `OM_API_KEY` fallback; '' when none. */
  apiKey: string;
  /** Hosted service addresses (file's `service` block under the CORTEX_* variables); `embedded` until the local service runs. */
  addresses: AddressSettings;
  /** Normalised URID (upper case) or undefined. */
  urid?: string;
  /** The fleet channel's settings when this robot joins a fleet (the `fleet` block under CORTEX_MQTT_*). */
  fleet?: FleetSettings;
  /** SHA-256 (hex) of the file's bytes as read: which configuration runs, for the fleet's state. */
  sha256?: string;
  /** Where the file reads the environment: each `${VAR}` substituted, by path (built-ins CONFIG_DIR/STATE_DIR left out). */
  variables?: { path: string; names: string[] }[];
  warnings: string[];
  /** What the environment changed that a person should know, one line each (an OpenAI-compatible model endpoint). */
  notes?: string[];
}
