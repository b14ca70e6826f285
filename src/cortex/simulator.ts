// What a simulator (WebSim) gets of the running agent (AgentControl, its live media) and how one is built and stopped.
import type { Logger } from 'pino';
import type { AgentBus } from './events.js';

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
  /** Releases a latched emergency stop, as the safety governor answers; refused (with the reason) when none is latched. */
  release(source: string): Promise<{ ok: boolean; reason?: string }>;
  /** The safety governor's status: the latch, whether the robot is moving, why motion is paused. */
  safetyStatus(): import('./safety-status.js').SafetyStatus;
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
  /** The robot's lidar: the newest scan's points, free paths and the guard's lines; undefined without a lidar or before its first scan. */
  scan?(): import('../lidar/view.js').ScanPreview | undefined;
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
