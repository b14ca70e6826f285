// The connector contract: what carries out an action's commands (its descriptor, with args and queue policy, is in src/plugins/).
import type { Logger } from 'pino';
import type { CloudClient } from '../cloud/client.js';

/** Moments of a command that the turn latency is made of (speech: synthesis and playback). */
export type CommandMark = 'tts_first_byte' | 'playback_start' | 'playback_end';

/** What a running command gets besides its value. */
export interface CommandJob {
  /** What `prepare` returned for this command when it was queued, if the connector prepares. */
  prepared?: unknown;
  /** Reports a moment of the command (ms since the epoch); whoever dispatched the command may listen. */
  mark?: (mark: CommandMark, at: number) => void;
  /** Reports CU the hosted service charged for this command (speech synthesis), once per charge. */
  charge?: (cu: number) => void;
}

/** Carries out one action value (already validated against the action's `args` schema). */
export interface ActionConnector {
  readonly name: string;
  /** Runs one command; resolves when done, rejects on failure; aborting `signal` interrupts it. */
  run(value: unknown, signal: AbortSignal, job?: CommandJob): Promise<void>;
  /**
   * For a connector whose commands end before they return (a printed line, a bus event): runs one
   * command to its end and returns, or throws on failure. The action actor then runs the command in
   * one step, without a child actor, a promise or an AbortSignal (nothing is left to interrupt).
   * `run` must do the same thing, for callers that want a promise.
   */
  runSync?(value: unknown, job?: CommandJob): void;
  /**
   * Starts the slow part of a command as soon as it is queued (speech: synthesis, so the next sentence
   * is ready when the one playing ends). `signal` aborts when the command is dropped, interrupted or
   * done. Must not reject unhandled: `run` receives the result in `job.prepared` and awaits it there.
   */
  prepare?(value: unknown, signal: AbortSignal, job?: Omit<CommandJob, 'prepared'>): unknown;
  /** Releases what the connector holds (child processes, ports). Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Motion connectors (descriptor `motion: true`) must have it: brings the robot to a standstill now,
   * whether a command runs or not (the serial line's STOP, the console's "stand still"). The safety
   * governor calls it through the action actor; it never waits for an answer from the controller.
   * A halt right after a halt, with no command in between, sends nothing more.
   */
  halt?(): Promise<void>;
  /**
   * A connection that reconnects (the `mqtt` connector's broker, the `serial` connector's port): the
   * session machine's input (actors/streams/session-machine.ts). The action actor runs it as its child
   * (`session`; a serial port's is `device:serial`, its states on the bus as `stream` events of kind
   * `serial`), so it reconnects with the one engine and shows in the inspector; the connector still
   * closes what it holds in `stop()`.
   */
  readonly session?: unknown;
}

export interface ActionContext {
  logger: Logger;
  stateDir: string;
  /** Where console connectors write their lines (the terminal view or `--events`). */
  write: (line: string) => void;
  /** The hosted (or embedded local) service, for connectors that call it (speechlab_tts, speechb_tts). */
  cloud?: CloudClient;
  /** Publishes context values for `context_aware` rules (a conversation that ended): the action actor hands them to the mode machine. */
  publishContext?: (values: Record<string, unknown>) => void;
  /** The agent's browser voice link: speakers copy what they play to the WebSim pages that listen. */
  browserAudio?: import('./browser-audio.js').BrowserAudio;
  /** The agent's newest GPS position (remember_location saves it by name). */
  positions?: import('./positions.js').PositionBoard;
  /** The robot's bodies in this process (the body connector moves the body BodyInput reads). */
  bodies?: import('./bodies.js').BodyBoard;
  /** A recording of the run (`--record`, `--foxglove`): connectors that put DDS samples on the wire hand it copies. */
  media?: import('./input.js').MediaTap;
}

export type ConnectorFactory = (config: unknown, ctx: ActionContext) => ActionConnector;
