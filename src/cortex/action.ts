// The action contract: an action (speak, move, face) has typed tool arguments and connectors that carry them out.
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { PluginInfo, PluginSpec, Registry } from '../plugin-registry.js';
import type { CloudClient } from '../cloud/client.js';

/** Carries out one action value (already validated against the action's `args` schema). */
export interface ActionConnector {
  readonly name: string;
  /** Runs one command; resolves when done, rejects on failure; aborting `signal` interrupts it. */
  run(value: unknown, signal: AbortSignal): Promise<void>;
  /** Releases what the connector holds (child processes, ports). Safe to call twice. */
  stop(): Promise<void>;
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

/**
 * An action plugin: `type` is the action's `name` in a configuration. `args` is the zod schema of the
 * tool-call arguments the model sends (it becomes the tool's JSON schema); `queue` says what happens
 * to a new command while one runs: `queue` (speak: utterances wait their turn) or `latest` (move,
 * face: only the newest pending command is kept).
 */
export interface ActionPluginSpec extends PluginInfo {
  args: z.ZodType;
  queue: 'queue' | 'latest';
  connectors: Registry<ConnectorFactory, PluginSpec<ConnectorFactory>>;
}
