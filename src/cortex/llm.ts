// The model plugin contract: one call per tick with the fused prompt and the tools, answered with text and tool calls.
import type { Logger } from 'pino';
import type { CloudClient } from '../cloud/client.js';
import type { ChatMessage, ToolDefinition, Usage } from '../cloud/protocol.js';

/** A tool call the model chose: the tool's name (an action's `llm_label` or an MCP tool) and its parsed arguments. */
export interface LlmToolCall {
  id?: string;
  name: string;
  arguments: unknown;
  /** Provider metadata of the call that must go back with it in the next request (Gemini's `extra_content.google.thought_signature`). */
  extra?: Record<string, unknown>;
}

export interface LlmAnswer {
  /** Plain text the model said, if any. */
  text?: string;
  /** What a reasoning model thought before answering (`reasoning_content` / `reasoning`): logged, never said. */
  reasoning?: string;
  toolCalls: LlmToolCall[];
  usage?: Usage;
  /** What the call cost on the hosted service, in CU (the price table, rounded up per request); absent when unpriced. */
  costCu?: number;
  /** Model that answered (for MultiLLM, which one won). */
  model: string;
  latencyMs: number;
  /** True when the answer came as a stream (the observer saw it arrive). */
  streamed?: boolean;
}

export interface LlmRequest {
  messages: ChatMessage[];
  tools: ToolDefinition[];
}

/**
 * Receives a streamed answer as it arrives (plugins that stream call it; the others do not). Tool calls
 * are numbered by `index` in the answer; their arguments are parsed incrementally.
 */
export interface AnswerObserver {
  /** The request went out (after any retry waits); `at` in ms since the epoch. */
  requestSent?(at: number): void;
  /** The first text or tool-call byte of the answer arrived. */
  firstToken?(at: number): void;
  /** A fragment of plain text. */
  text?(fragment: string): void;
  /** A tool call's name is known. */
  toolCallStarted?(index: number, name: string, id?: string): void;
  /** The arguments as parsed so far: complete members and a string in progress (see IncrementalJson). */
  toolCallProgress?(index: number, partial: unknown): void;
  /** The call's arguments are complete (possibly long before the answer ends). Called once per call. */
  toolCallDone?(index: number, call: LlmToolCall): void;
}

export interface LlmPlugin {
  readonly type: string;
  /**
   * Asks the model; aborted through `signal` when the mode exits or the call times out. A plugin that
   * streams reports the answer to `observer` as it arrives; the returned answer is the whole of it either way.
   */
  ask(request: LlmRequest, signal: AbortSignal, observer?: AnswerObserver): Promise<LlmAnswer>;
  /**
   * Replaces the remembered answer to `prompt` (the last exchange with it) by what actually happened,
   * e.g. the sentences spoken before a barge-in; an answer cut while it streamed is remembered now.
   * Plugins without history need not implement it.
   */
  reviseAnswer?(prompt: string, answer: string): void;
  /**
   * Called once when the mode's runtime stops: ends background work (a history summary in flight) and
   * forgets the conversation. Plugins without such work need not implement it.
   */
  stop?(): void;
  /**
   * Asks the same model, outside the conversation, to summarise `text` after `instruction` (a
   * conversation that ended, for the memory); metered like any call. Plugins without it summarise nothing.
   */
  summarise?(instruction: string, text: string, signal: AbortSignal): Promise<string>;
}

export interface LlmContext {
  logger: Logger;
  /** The hosted (or embedded local) service client, bound to resolved addresses and the API key. */
  cloud: CloudClient;
  /**
   * Where the conversation of this mode is kept across restarts (`<state dir>/history/<config>/<mode>.json`);
   * absent, nothing is kept. The plugin's `persist_history: false` turns it off too.
   */
  historyFile?: string;
  /** Where the plugin reports changes of its health (the runtime puts them on the bus); absent, they are only logged. */
  report?: (report: ModelHealthReport) => void;
}

/** A change of a model's health for the session (reported on the bus as a `model` event). */
export interface ModelHealthReport {
  /** The plugin's label, e.g. `CloudLLM provider_b/gem-2.5-flash`. */
  model: string;
  /** `streaming_off`: its streams could not be read, it is asked without streaming from now on; `failing`: it keeps failing; `healthy`: it answers again. */
  state: 'streaming_off' | 'failing' | 'healthy';
  reason?: string;
  /** Consecutive failed calls (`failing`). */
  failures?: number;
}

export type LlmFactory = (config: unknown, ctx: LlmContext) => LlmPlugin;
