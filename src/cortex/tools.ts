// The tools offered to the model: one function per action (named by llm_label, JSON Schema from its zod args) plus MCP tools.
import { z } from 'zod';
import type { ToolDefinition } from '../cloud/protocol.js';
import type { ActionConfig } from '../config/schema.js';
import type { ToolsForMode } from './contracts.js';
import { descriptors } from '../plugins/index.js';
import { argsFor, entryDescription, type ActionDescriptor, type Registry } from '../plugins/index.js';

/** Longest tool name chat-completions APIs accept. */
export const MAX_TOOL_NAME = 64;

/**
 * A tool name from a label: characters outside [A-Za-z0-9_-] become `_`, cut to 64. Labels such as
 * `speak` are unchanged; `external movement controller` becomes `external_movement_controller`. The
 * agent loop finds the action of a tool call with `actionForTool`, which applies the same rule.
 */
export function toolName(label: string): string {
  const clean = label.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_TOOL_NAME);
  return clean.length ? clean : '_';
}

/** Converted schemas, by zod schema: descriptors' args never change, and converting one was a sixth of a tick. */
const converted = new WeakMap<z.ZodType, Record<string, unknown>>();

/**
 * The JSON Schema of a zod args schema, as chat-completions `parameters` (an object, no `$schema`),
 * converted once per schema; the result is shared, so callers do not modify it.
 */
export function parametersOf(args: z.ZodType): Record<string, unknown> {
  let parameters = converted.get(args);
  if (!parameters) {
    parameters = convert(args);
    converted.set(args, parameters);
  }
  return parameters;
}

function convert(args: z.ZodType): Record<string, unknown> {
  const schema = z.toJSONSchema(args, { target: 'draft-7', unrepresentable: 'any', io: 'input' }) as Record<string, unknown>;
  delete schema.$schema;
  if (schema.type !== 'object') {
    // Chat-completions tools take an object of arguments: wrap anything else as `{ value }`.
    return { type: 'object', properties: { value: schema }, required: ['value'], additionalProperties: false };
  }
  return schema;
}

/** One tool for one action entry: name from llm_label, description from the action spec and the entry. */
export function toolForAction(entry: ActionConfig, spec: Pick<ActionDescriptor, 'description' | 'args' | 'argsOf'>): ToolDefinition {
  const description = `${entryDescription(spec, entry.config)} (action ${entry.name}${entry.llm_label !== entry.name ? `, "${entry.llm_label}"` : ''})`;
  return { type: 'function', function: { name: toolName(entry.llm_label), description, parameters: parametersOf(argsFor(spec, entry.config)) } };
}

/**
 * Builds `toolsForMode` over a table of action descriptors. Actions the registry does not know are skipped (the
 * config check has already refused them); when two entries map to the same tool name, the first wins.
 * `exclude_from_prompt` hides an action from the prompt's descriptions, not from the tools.
 */
export function makeToolsForMode(registry: Pick<Registry<ActionDescriptor>, 'get'>): ToolsForMode {
  return (actions, mcpTools) => {
    const tools: ToolDefinition[] = [];
    const seen = new Set<string>();
    for (const entry of actions) {
      const spec = registry.get(entry.name);
      if (!spec) continue;
      const tool = toolForAction(entry, spec);
      if (seen.has(tool.function.name)) continue;
      seen.add(tool.function.name);
      tools.push(tool);
    }
    for (const tool of mcpTools) {
      if (seen.has(tool.function.name)) continue;
      seen.add(tool.function.name);
      tools.push(tool);
    }
    return tools;
  };
}

/** The action whose tool is `name` (exact llm_label first, then the sanitised form), or undefined. */
export function actionForTool<T extends { entry: ActionConfig }>(handles: readonly T[], name: string): T | undefined {
  return handles.find((h) => h.entry.llm_label === name) ?? handles.find((h) => toolName(h.entry.llm_label) === name);
}

/** `toolsForMode` over the built-in action descriptors of src/plugins/. */
export const toolsForMode: ToolsForMode = makeToolsForMode(descriptors.actions);
