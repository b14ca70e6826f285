// Contracts between the agent loop and the pieces it drives: action handles, the tool list, the MCP hub.
import type { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { ToolDefinition } from '../cloud/protocol.js';
import type { ActionConfig } from '../config/schema.js';
import type { AgentBus } from './events.js';
import type { CloudClient } from '../cloud/client.js';
import type { Plugins } from './plugins.js';
import type { CommandMark } from './action.js';

/**
 * A running action of the current mode (built from an `agent_actions` entry). It owns its queue policy:
 * `dispatch` never blocks the loop; invalid values are reported on the bus as `failed`, never thrown.
 */
export interface ActionHandle {
  readonly entry: ActionConfig;
  /** Validates `value` against the action's args schema, then queues it per the action's policy. */
  dispatch(value: unknown, origin: 'model' | 'hook'): void;
  /**
   * Runs `value` and resolves when it is done (hooks use this: `action` handlers, `message` via speak;
   * the loop for streamed speech, to know what was said). Aborting `signal` cancels the command.
   * `options.mark` hears the command's moments (synthesis first byte, playback start).
   */
  run(value: unknown, signal: AbortSignal, options?: { origin?: 'model' | 'hook'; mark?: (mark: CommandMark, at: number) => void }): Promise<void>;
  /** Stops what is playing or moving now and drops the queue (barge-in for speak). */
  interrupt(): void;
  /** Number of commands waiting. */
  readonly queueLength: number;
  /** True while a command runs (speak: while audio plays, which mutes the microphone). */
  readonly busy$: Observable<boolean>;
  stop(): Promise<void>;
}

export interface ActionHandleDeps {
  logger: Logger;
  bus: AgentBus;
  mode: string;
  stateDir: string;
  /** Console output of `console` connectors (the terminal view, or events only). */
  write: (line: string) => void;
  /** The hosted (or embedded local) service; connectors that need it fail with a clear error without it. */
  cloud?: CloudClient;
  /** The action's descriptor (args, queue policy) and its loaded connector. */
  plugins: Pick<Plugins, 'action' | 'connector'>;
  /** The agent's browser voice link (speech copied to WebSim pages). */
  browserAudio?: import('./browser-audio.js').BrowserAudio;
  /** The agent's newest GPS position, for connectors that save it. */
  positions?: import('./positions.js').PositionBoard;
  /** The robot's bodies in this process, for connectors that move one. */
  bodies?: import('./bodies.js').BodyBoard;
  /** A recording of the run, for connectors that record what they send (DDS samples). */
  media?: import('./input.js').MediaTap;
}

/** The tools offered to the model: one per action (named by llm_label) plus MCP tools (`mcp_<server>_<tool>`). */
export type ToolsForMode = (actions: ActionConfig[], mcpTools: ToolDefinition[]) => ToolDefinition[];

/**
 * The tool servers of a mode as the loop sees them. A server that fails to start or dies is logged,
 * reported on the bus and retried in the background (by its actor), and the agent goes on without it.
 */
export interface McpHub {
  /** Tools of the servers connected now, named `mcp_<server>_<tool>`. */
  tools(): ToolDefinition[];
  /** True when `name` is one of `tools()`. */
  has(name: string): boolean;
  /** Calls a tool with a timeout; resolves to the result as text for the model. */
  call(name: string, args: unknown, signal: AbortSignal): Promise<string>;
}

export type { AgentControl, MediaPreview, SimulatorFactory, SimulatorHandle } from './simulator.js';
