// The fleet channel as a child of the root actor: a callback actor that owns the channel and its MQTT client; its cleanup publishes `offline` and ends the client.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromCallback, type AnyActorLogic } from 'xstate';
import type { Logger } from 'pino';
import type { FleetSettings } from '../src/config/fleet.js';
import type { AgentBus } from '../src/cortex/events.js';
import { describeError } from '../src/errors.js';
import type { FleetControl, ReloadHandler } from '../src/fleet/execute.js';
import { projectRoot } from '../src/paths.js';

/** What `cortexd run` gives the agent's fleet channel: the narrow way to replace the running configuration. */
export interface FleetHost {
  reload?: ReloadHandler;
}

export interface FleetActorDeps {
  settings: FleetSettings;
  bus: AgentBus;
  control: FleetControl;
  logger: Logger;
  stateDir: string;
  configSha256?: string;
  host?: FleetHost;
  /** Why the agent is stopping, for the `offline` status (a signal, `--for`, a reload). */
  stopReason: () => string;
  /** Registers the asynchronous close, which the agent waits for (bounded) before it ends. */
  track: (p: Promise<unknown>) => void;
}

let version: string | undefined;

/** The runtime's version (package.json), as the state reports it. */
export function runtimeVersion(): string {
  try {
    return (version ??= (JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version: string }).version);
  } catch {
    return 'unknown';
  }
}

/**
 * The `fleet` actor. The channel's code (and the MQTT client) load when the actor starts, so an agent
 * without a fleet never loads them. Commands seen are kept in `<state dir>/fleet/<robot>.commands.json`
 * until they expire, so a replay is refused across reloads and restarts too.
 */
export function fleetLogic(deps: FleetActorDeps): AnyActorLogic {
  return fromCallback(() => {
    let stopped = false;
    let channel: { stop(reason?: string): Promise<void> } | undefined;
    let guard: { close(): Promise<void> } | undefined;
    const logger = deps.logger.child({ component: 'fleet' });
    const started = Promise.all([import('../src/fleet/channel.js'), import('../src/fleet/guard.js')])
      .then(([{ FleetChannel }, { CommandGuard }]) => {
        if (stopped) return;
        const g = new CommandGuard({
          maxTtlMs: deps.settings.commandMaxTtlMs,
          file: join(deps.stateDir, 'fleet', `${deps.settings.robotId}.commands.json`),
          onWarning: (m) => logger.warn(m),
        });
        guard = g;
        const c = new FleetChannel({
          settings: deps.settings,
          bus: deps.bus,
          control: deps.control,
          version: runtimeVersion(),
          ...(deps.configSha256 ? { configSha256: deps.configSha256 } : {}),
          ...(deps.host?.reload ? { reload: deps.host.reload } : {}),
          guard: g,
          logger,
        });
        channel = c;
        c.start();
      })
      .catch((err: unknown) => deps.bus.emit({ type: 'error', at: Date.now(), source: 'fleet', message: `fleet channel not started: ${describeError(err)}` }));
    return () => {
      stopped = true;
      // The ids seen that are not on disk yet are written before the agent ends (a restart refuses their replay).
      deps.track(started.then(() => channel?.stop(deps.stopReason())).finally(() => guard?.close()));
    };
  });
}
