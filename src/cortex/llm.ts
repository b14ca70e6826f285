// The model plugin contract: one call per tick with the fused prompt and the tools, answered with text and tool calls.
import type { Logger } from 'pino';
import type { CloudClient } from '../cloud/client.js';
import type { ChatMessage, ToolDefinition, Usage } from '../cloud/protocol.js';

/** A tool call the model chose: the tool's name (an action's `llm_label` or an MCP tool) and its parsed arguments. */
export interface LlmToolCall {
  id?: string;
  name: string;
  arguments: unknown;
}

export interface LlmAnswer {
  /** Plain text the model said, if any. */
  text?: string;
  toolCalls: LlmToolCall[];
  usage?: Usage;
  /** What the call cost on the hosted service, in CU (the price table, rounded up per request); absent when unpriced. */
  costCu?: number;
  /** Model that answered (for MultiLLM, which one won). */
  model: string;
  latencyMs: number;
}

export interface LlmRequest {
  messages: ChatMessage[];
  tools: ToolDefinition[];
}

export interface LlmPlugin {
  readonly type: string;
  /** Asks the model; aborted through `signal` when the mode exits or the call times out. */
  ask(request: LlmRequest, signal: AbortSignal): Promise<LlmAnswer>;
  /**
   * Called once when the mode's runtime stops: ends background work (a history summary in flight) and
   * forgets the conversation. Plugins without such work need not implement it.
   */
  stop?(): void;
}

export interface LlmContext {
  logger: Logger;
  /** The hosted (or embedded local) service client, bound to resolved addresses and the API key. */
  cloud: CloudClient;
}

export type LlmFactory = (config: unknown, ctx: LlmContext) => LlmPlugin;
