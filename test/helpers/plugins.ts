// Plugins for tests: every built-in action with every connector (or a given registry's) for tests that build action handles directly, and scripted models.
import { z } from 'zod';
import type { ActionConfig } from '../../src/config/schema.js';
import type { LlmAnswer } from '../../src/cortex/llm.js';
import type { LlmSpec } from '../../src/cortex/plugins.js';
import { builtinPlugins, resolvePlugins, type PluginRegistry, type Plugins } from '../../actors/plugin-registry.js';

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

/**
 * A model plugin for tests, named `type`: `answer` gets the last user message of each call (and the
 * call's signal) and returns the answer; `call(name, args)` builds a one-tool-call answer and
 * `nothing` the empty one, both labelled with the model `type` in lower case.
 */
export function scriptedLlm(
  type: string,
  answer: (
    user: string,
    signal: AbortSignal,
    reply: { call: (name: string, args: Record<string, unknown>) => LlmAnswer; nothing: LlmAnswer },
  ) => LlmAnswer | Promise<LlmAnswer>,
  description = 'test model',
): LlmSpec {
  const model = type.replace(/LLM$/, '').toLowerCase();
  const reply = {
    call: (name: string, args: Record<string, unknown>): LlmAnswer => ({ toolCalls: [{ name, arguments: args }], model, latencyMs: 1 }),
    nothing: { toolCalls: [], model, latencyMs: 1 } as LlmAnswer,
  };
  return {
    type,
    description,
    schema: z.looseObject({}),
    needs: () => [],
    create: () => ({
      type,
      ask: async (request, signal) => answer(String(request.messages.findLast((m) => m.role === 'user')?.content ?? ''), signal, reply),
    }),
  };
}
