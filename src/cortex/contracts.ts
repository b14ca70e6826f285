// Contracts between the agent loop and the pieces it drives: action handles, the tool list, the MCP hub.
import type { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { ToolDefinition } from '../cloud/protocol.js';
import type { ActionConfig } from '../config/schema.js';
import type { AgentBus } from './events.js';
import type { CloudClient } from '../cloud/client.js';
import type { Plugins } from '../plugins/types.js';
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

/** What a simulator (WebSim) may see and do of the running agent. Never exposes secrets. */
export interface AgentControl {
  readonly bus: AgentBus;
  /** The configuration name and its converted form (secrets redacted by whoever sends it anywhere). */
  readonly configName: string;
  readonly config: import('../config/schema.js').LoadedConfig['config'];
  currentMode(): string;
  /** A manual switch, with the mode machine's refusal reason when refused. */
  switchMode(mode: string, reason: string): Promise<{ ok: boolean; reason?: string }>;
  /** Feeds typed text to the current mode's TextInput; false when the mode has none. */
  pushText(text: string): boolean;
  /**
   * Latches the emergency stop (motion interrupted, stop command sent, later motion refused until
   * released). `source` names who pressed it (`websim`, `fleet`, ...); it is on the bus and in the journal.
   */
  estop(reason: string, source: string): void;
  /** Releases a latched emergency stop; refused (with the reason) when none is latched. */
  release(source: string): { ok: boolean; reason?: string };
  /** The safety governor's status: the latch, whether the robot is moving, why motion is paused. */
  safetyStatus(): import('../safety/policy.js').SafetyStatus;
  /** Sets context values for `context_aware` rules; `source` names who set them on the bus (`fleet`, `websim`). */
  setContext?(values: Record<string, unknown>, source?: string): void;
  /** Live media of the current mode's inputs (camera frame, microphone level), read on request: media never goes on the bus. */
  readonly media: MediaPreview;
  /** The browser voice link: the page's microphone in, the robot's speech out (media, never on the bus). */
  readonly browserAudio?: import('./browser-audio.js').BrowserAudio;
}

/** The current mode's camera and microphone as a person watching sees them (WebSim). */
export interface MediaPreview {
  /** The newest JPEG frame of the first input of the current mode that has one; undefined when none has yet. */
  frame(): Promise<{ input: string; jpeg: Buffer; at: number } | undefined>;
  /** The newest microphone level of the first input of the current mode that listens to one. */
  level(): ({ input: string } & import('./input.js').AudioLevel) | undefined;
}

/** A running simulator; one instance per agent, kept across mode switches. */
export interface SimulatorHandle {
  start(): Promise<void>;
  stop(): Promise<void>;
}

export type SimulatorFactory = (
  config: unknown,
  ctx: {
    agent: AgentControl;
    logger: Logger;
    stateDir?: string;
    /**
     * Settles when the simulator may do its start-up work (the agent's first tick is done, or a second
     * passed, or it is stopping): until then `start()` only listens to the bus, so that work stays out of
     * the agent's start-up and no event is missed. Absent: at once.
     */
    startAfter?: Promise<void>;
  },
) => SimulatorHandle;
