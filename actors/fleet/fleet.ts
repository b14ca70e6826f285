// The fleet channel as a child of the root actor: a machine that owns the channel and runs its MQTT connection's session actor
// Stopping it publishes `offline` and ends the client.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { assign, fromCallback, fromPromise, setup, type AnyActorLogic } from 'xstate';
import type { Logger } from 'pino';
import type { FleetSettings } from '../../src/config/fleet.js';
import type { AgentBus } from '../../src/cortex/events.js';
import { describeError } from '../../src/errors.js';
import type { FleetControl, ReloadHandler } from '../../src/fleet/execute.js';
import type { FleetChannel } from '../../src/fleet/channel.js';
import type { CommandGuard } from '../../src/fleet/guard.js';
import type { FleetTrust } from '../../src/fleet/trust.js';
import { mqttSessionInput } from '../streams/mqtt-session.js';
import { streamSessionLogic } from '../streams/session-machine.js';
import { projectRoot } from '../../src/paths.js';

/** What `cortexd run` gives the agent's fleet channel: the narrow way to replace the running configuration. */
export interface FleetHost {
  reload?: ReloadHandler;
  /** Whom the robot believes, from its own file at start: the channel of a reloaded configuration keeps it. */
  trust?: FleetTrust;
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

/** What the fleet actor loads when it starts: the channel (with its connection) and the command ids seen. */
interface Loaded {
  channel: FleetChannel;
  guard: CommandGuard;
}

/**
 * The `fleet` actor: `loading` (the channel's code and the MQTT client load when the actor starts, so
 * an agent without a fleet never loads them) -> `running`, which runs the channel (child `channel`)
 * and its broker connection's session actor (child `mqtt`, system id `fleet/mqtt`, run by
 * actors/streams/session-machine.ts, so the inspector shows the link's state). Stopping stops
 * the channel first (pending commands answered, `offline` published), then the connection. Commands
 * seen are kept in `<state dir>/fleet/<robot>.commands.json` until they expire, so a replay is refused
 * across reloads and restarts too.
 */
export function fleetLogic(deps: FleetActorDeps): AnyActorLogic {
  const logger = deps.logger.child({ component: 'fleet' });
  // The channel and the guard are services, kept by this logic (one fleet actor per agent), not in the
  // context: the context holds what the inspector and a snapshot can carry (the robot and whether it loaded).
  let loaded: Loaded | undefined;
  return setup({
    types: { context: {} as { robot: string; loaded: boolean } },
    actors: {
      load: fromPromise<Loaded>(async () => {
        const [{ FleetChannel }, { CommandGuard }] = await Promise.all([import('../../src/fleet/channel.js'), import('../../src/fleet/guard.js')]);
        const guard = new CommandGuard({
          maxTtlMs: deps.settings.commandMaxTtlMs,
          file: join(deps.stateDir, 'fleet', `${deps.settings.robotId}.commands.json`),
          onWarning: (m) => logger.warn(m),
        });
        const channel = new FleetChannel({
          settings: deps.settings,
          bus: deps.bus,
          control: deps.control,
          version: runtimeVersion(),
          ...(deps.configSha256 ? { configSha256: deps.configSha256 } : {}),
          ...(deps.host?.reload ? { reload: deps.host.reload } : {}),
          ...(deps.host?.trust ? { trust: deps.host.trust } : {}),
          guard,
          logger,
          stopReason: deps.stopReason,
          track: deps.track,
        });
        return { channel, guard };
      }),
      channel: fromCallback<{ type: 'none' }, Loaded>(({ input }) => {
        input.channel.start();
        // The ids seen that are not on disk yet are written before the agent ends (a restart refuses their replay).
        return () => deps.track(input.channel.stop(deps.stopReason()).finally(() => input.guard.close()));
      }),
      session: streamSessionLogic(),
    },
  }).createMachine({
    id: 'fleet',
    context: { robot: deps.settings.robotId, loaded: false },
    initial: 'loading',
    states: {
      loading: {
        invoke: {
          src: 'load',
          onDone: {
            target: 'running',
            actions: [({ event }) => void (loaded = event.output), assign({ loaded: true })],
          },
          onError: {
            target: 'failed',
            actions: ({ event }) =>
              deps.bus.emit({ type: 'error', at: Date.now(), source: 'fleet', message: `fleet channel not started: ${describeError(event.error)}` }),
          },
        },
      },
      running: {
        tags: ['running'],
        // In this order: children stop in the order they started, so the channel says `offline` before the link closes.
        invoke: [
          { id: 'channel', src: 'channel', input: () => loaded! },
          { id: 'mqtt', systemId: 'fleet/mqtt', src: 'session', input: () => mqttSessionInput(loaded!.channel.connection) },
        ],
      },
      failed: { tags: ['failed'] },
    },
  });
}
