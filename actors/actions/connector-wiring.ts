// Wires an action's connector into its actor: made at start, its session a child that holds the link for a halt, halted and stopped at the end.
import type { ActionConfig } from '../../src/config/schema.js';
import type { ActionConnector } from '../../src/cortex/action.js';
import type { StreamLink } from '../../src/cloud/link.js';
import type { ActionHandleDeps } from '../../src/cortex/contracts.js';
import { describeError } from '../../src/errors.js';
import type { ActionDescriptor } from '../../src/plugins/types.js';
import type { SessionInput } from '../streams/session-machine.js';

/** Builds the connector of an entry; throws a PluginError naming the known connectors when it is unknown. */
export function createConnector(entry: ActionConfig, deps: ActionHandleDeps, publishContext?: (values: Record<string, unknown>) => void): ActionConnector {
  const spec = deps.plugins.connector(entry.name, entry.connector);
  const made = spec.create(entry.config ?? {}, {
    logger: deps.logger,
    stateDir: deps.stateDir,
    write: deps.write,
    ...(deps.cloud ? { cloud: deps.cloud } : {}),
    ...(publishContext ? { publishContext } : {}),
    ...(deps.browserAudio ? { browserAudio: deps.browserAudio } : {}),
    ...(deps.positions ? { positions: deps.positions } : {}),
    ...(deps.bodies ? { bodies: deps.bodies } : {}),
    ...(deps.media ? { media: deps.media } : {}),
  });
  if (spec.motion && typeof made.halt !== 'function') throw new Error(`connector ${entry.connector} of ${entry.name} moves the robot but has no halt()`);
  return made;
}

/** An action's connector as its actor starts: the connector and descriptor, or why it could not be made (logged and on the bus). */
export interface Made {
  spec: ActionDescriptor | undefined;
  connector: ActionConnector | undefined;
  /** The connector moves the robot (its descriptor's `motion`). */
  motion: boolean;
  broken: string | undefined;
}

/** Finds the action's descriptor and makes its connector; a failure is reported and kept as `broken` (every command then fails with it). */
export function makeConnector(entry: ActionConfig, deps: ActionHandleDeps, publishContext: (values: Record<string, unknown>) => void): Made {
  // Filled as far as it got: a connector that fails to build leaves the descriptor and `motion` found before it.
  const made: Made = { spec: undefined, motion: false, connector: undefined, broken: undefined };
  try {
    made.spec = deps.plugins.action(entry.name);
    made.motion = deps.plugins.connector(entry.name, entry.connector).motion;
    made.connector = createConnector(entry, deps, publishContext);
  } catch (err) {
    made.broken = `action ${entry.llm_label} not started: ${describeError(err)}`;
    deps.logger.warn(made.broken);
    deps.bus.emit({ type: 'error', at: Date.now(), source: 'action', message: made.broken });
  }
  return made;
}

/**
 * Stops a connector as its action stops: a motion connector is halted first (leaving a mode stops its
 * motion before the port closes; halt sends nothing when the robot was already told to stop). Returns
 * the halt, which the session's link waits for before it closes (releasedAfter), and the whole stop.
 */
export function stopConnector(
  connector: ActionConnector,
  motion: boolean,
  label: string,
  deps: ActionHandleDeps,
): { halting: Promise<void>; closing: Promise<unknown> } {
  // Its device session stops with this actor (a stopped actor emits nothing more): say so on the bus.
  const kind = (connector.session as SessionInput | undefined)?.prefix;
  if (kind === 'serial') deps.bus.emit({ type: 'stream', at: Date.now(), kind, input: label, state: 'stopped' });
  const log = (what: string) => (err: unknown) => deps.logger.warn(`${what} ${label}: ${describeError(err)}`);
  const halting = motion ? (connector.halt?.() ?? Promise.resolve()).catch(log('halting')) : Promise.resolve();
  const closing = halting.then(() => connector.stop()).catch(log('stopping'));
  return { halting, closing };
}

/** How long a stopping action's session holds its link for a halt whose write hangs (a wedged port): a hang guard. */
export const HALT_RELEASE_MS = 2000;

/**
 * `session` whose links, when closed, are let go only after the halt `halting()` gives (if any) settled,
 * or after HALT_RELEASE_MS: the action actor's stop sets it before its session child is stopped. A link
 * closed while no halt is under way (an unplug, a reconnect) is let go at once.
 */
export function releasedAfter(session: SessionInput, halting: () => Promise<void> | undefined): SessionInput {
  return {
    ...session,
    connect: async (signal) => {
      const link = await session.connect(signal);
      // The link's methods, bound to it (a link can be a class instance: a spread would lose them), with its close held.
      const held: StreamLink = {
        bufferedAmount: () => link.bufferedAmount(),
        subscribe: (listener) => link.subscribe(listener),
        close: (...args) => {
          const halt = halting();
          if (!halt) return link.close(...args);
          let guard: NodeJS.Timeout | undefined;
          const hung = new Promise<void>((resolve) => {
            guard = setTimeout(resolve, HALT_RELEASE_MS);
            guard.unref();
          });
          void Promise.race([halt, hung]).then(() => {
            clearTimeout(guard);
            link.close(...args);
          });
        },
      };
      if (link.sendAudio) held.sendAudio = (pcm) => link.sendAudio!(pcm);
      if (link.endUtterance) held.endUtterance = () => link.endUtterance!();
      if (link.sendFrame) held.sendFrame = (jpeg, at) => link.sendFrame!(jpeg, at);
      return held;
    },
  };
}
