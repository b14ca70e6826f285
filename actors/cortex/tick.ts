// One tick of a mode: drain the inputs, let keyword rules see the text, fuse the prompt, ask the model, hand out its tool calls.
import type { Logger } from 'pino';
import type { ChatMessage, ToolDefinition } from '../../src/cloud/protocol.js';
import type { AgentConfig, ModeConfig } from '../../src/config/schema.js';
import type { ActionHandle, McpHub, ToolsForMode } from '../../src/cortex/contracts.js';
import type { AgentBus } from '../../src/cortex/events.js';
import { fuse, promptActions, promptText, type FuserInput } from '../../src/cortex/fuser.js';
import type { InputPlugin } from '../../src/cortex/input.js';
import type { LlmAnswer, LlmPlugin } from '../../src/cortex/llm.js';
import { actionForTool } from '../../src/cortex/tools.js';
import { actions as actionRegistry } from '../../src/plugins.js';
import { describeError } from '../../src/errors.js';
import type { TickRequest, TickResult } from '../cortex.js';

/** A running input of the mode, with the final texts (typed lines, final transcripts) that arrived since the last tick. */
export interface TickInput {
  plugin: InputPlugin;
  finals: string[];
}

export interface TickDeps {
  config: AgentConfig;
  modeName: string;
  mode: ModeConfig;
  inputs: readonly TickInput[];
  handles: () => readonly ActionHandle[];
  llm: LlmPlugin;
  hub?: McpHub;
  toolsForMode: ToolsForMode;
  bus: AgentBus;
  logger: Logger;
  /**
   * Offers the tick's final texts to the mode machine's keyword rules; true when a transition fired
   * (the tick then ends without calling the model).
   */
  keywords: (text: string) => boolean;
  /** Skip the model when no input has anything new (default true). */
  skipIdle: boolean;
  /** Most model rounds per tick when MCP tool results are fed back (default 3). */
  maxToolRounds: number;
  now?: () => number;
}

/** The speak action of a mode: by llm_label `speak`, else by name `speak`. */
export function speakHandle(handles: readonly ActionHandle[]): ActionHandle | undefined {
  return handles.find((h) => h.entry.llm_label === 'speak') ?? handles.find((h) => h.entry.name === 'speak');
}

/** Description of an action for the prompt: the action plugin's description. */
const describeAction = (a: { name: string }) => actionRegistry.get(a.name)?.description;

/** Runs one tick; returns whether the model was called. Never throws for a model or tool failure (reported on the bus). */
export async function runTick(deps: TickDeps, req: TickRequest, signal: AbortSignal): Promise<TickResult> {
  const now = deps.now ?? Date.now;
  const fused: FuserInput[] = [];
  const finals: string[] = [];
  for (const input of deps.inputs) {
    const text = input.plugin.formattedLatestBuffer();
    if (text !== undefined && text.trim()) fused.push({ descriptor: input.plugin.descriptor, text });
    finals.push(...input.finals.splice(0));
  }
  if (finals.length && deps.keywords(finals.join('\n'))) return { calledModel: false };
  if (fused.length === 0 && deps.skipIdle) return { calledModel: false };

  const prompt = fuse(deps.config, deps.mode, fused, promptActions(deps.mode.agent_actions, describeAction));
  deps.bus.emit({ type: 'prompt', at: now(), mode: deps.modeName, tick: req.seq, prompt: promptText(prompt) });
  const messages: ChatMessage[] = [...prompt.messages];

  for (let round = 0; round < Math.max(1, deps.maxToolRounds); round++) {
    signal.throwIfAborted();
    const tools: ToolDefinition[] = deps.toolsForMode(deps.mode.agent_actions, deps.hub?.tools() ?? []);
    let answer: LlmAnswer;
    try {
      answer = await deps.llm.ask({ messages, tools }, signal);
    } catch (err) {
      if (signal.aborted) throw err;
      const error = describeError(err);
      deps.logger.warn({ tick: req.seq }, `model call failed: ${error}`);
      deps.bus.emit({ type: 'model.error', at: now(), mode: deps.modeName, tick: req.seq, error });
      return { calledModel: true };
    }
    deps.bus.emit({
      type: 'model.answer',
      at: now(),
      mode: deps.modeName,
      tick: req.seq,
      model: answer.model,
      ...(answer.text ? { text: answer.text } : {}),
      tool_calls: answer.toolCalls.map((c) => ({ name: c.name, arguments: c.arguments })),
      latency_ms: answer.latencyMs,
    });
    const results = await handOut(deps, answer, req.seq, signal);
    if (results.length === 0 || round + 1 >= deps.maxToolRounds) break;
    // MCP results go back to the model, which may call more tools or answer.
    messages.push({
      role: 'assistant',
      content: answer.text ?? null,
      tool_calls: results.map((r) => ({ id: r.id, type: 'function' as const, function: { name: r.name, arguments: JSON.stringify(r.args ?? {}) } })),
    });
    for (const r of results) messages.push({ role: 'tool', tool_call_id: r.id, content: r.content });
  }
  return { calledModel: true };
}

interface ToolResult {
  id: string;
  name: string;
  args: unknown;
  content: string;
}

/**
 * Hands an answer out: action tool calls to their handles (queued per the action's policy, never
 * awaited), MCP tool calls to the hub (awaited, results returned for the next round), unknown names
 * logged and dropped, and plain text to speak when no speak call was made and the mode can speak.
 */
async function handOut(deps: TickDeps, answer: LlmAnswer, tick: number, signal: AbortSignal): Promise<ToolResult[]> {
  const handles = deps.handles();
  const results: ToolResult[] = [];
  let spoke = false;
  const mcpCalls: Array<Promise<void>> = [];
  answer.toolCalls.forEach((call, i) => {
    const handle = actionForTool(handles, call.name);
    if (handle) {
      if (handle === speakHandle(handles)) spoke = true;
      handle.dispatch(call.arguments, 'model');
      return;
    }
    if (deps.hub?.has(call.name)) {
      const id = call.id ?? `call_${tick}_${i}`;
      mcpCalls.push(
        deps.hub.call(call.name, call.arguments, signal).then(
          (content) => void results.push({ id, name: call.name, args: call.arguments, content }),
          (err) => void results.push({ id, name: call.name, args: call.arguments, content: `error: ${describeError(err)}` }),
        ),
      );
      return;
    }
    deps.logger.warn({ tick, tool: call.name }, `model called unknown tool "${call.name}": dropped`);
    deps.bus.emit({ type: 'error', at: Date.now(), source: 'model', message: `unknown tool "${call.name}" dropped` });
  });
  if (!spoke && answer.text?.trim()) {
    const speak = speakHandle(handles);
    if (speak) speak.dispatch(answer.text.trim(), 'model');
  }
  await Promise.all(mcpCalls);
  return results;
}
