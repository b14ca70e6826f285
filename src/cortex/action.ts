// The connector contract: what carries out an action's commands (its descriptor, with args and queue policy, is in src/plugins/).
import type { Logger } from 'pino';
import type { CloudClient } from '../cloud/client.js';

/** Carries out one action value (already validated against the action's `args` schema). */
export interface ActionConnector {
  readonly name: string;
  /** Runs one command; resolves when done, rejects on failure; aborting `signal` interrupts it. */
  run(value: unknown, signal: AbortSignal): Promise<void>;
  /** Releases what the connector holds (child processes, ports). Safe to call twice. */
  stop(): Promise<void>;
  /**
   * Motion connectors (descriptor `motion: true`) must have it: brings the robot to a standstill now,
   * whether a command runs or not (the serial line's STOP, the console's "stand still"). The safety
   * governor calls it through the action actor; it never waits for an answer from the controller.
   * A halt right after a halt, with no command in between, sends nothing more.
   */
  halt?(): Promise<void>;
}

export interface ActionContext {
  logger: Logger;
  stateDir: string;
  /** Where console connectors write their lines (the terminal view or `--events`). */
  write: (line: string) => void;
  /** The hosted (or embedded local) service, for connectors that call it (speechlab_tts, speechb_tts). */
  cloud?: CloudClient;
}

export type ConnectorFactory = (config: unknown, ctx: ActionContext) => ActionConnector;
