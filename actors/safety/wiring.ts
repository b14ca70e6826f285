// What the agent needs to run the safety governor: its policy, its input (e-stop socket, saved latch), the prompt notice of a mode.
import type { Logger } from 'pino';
import type { AgentConfig, ModeConfig } from '../../src/config/schema.js';
import type { AgentBus } from '../../src/cortex/events.js';
import type { MediaTap } from '../../src/cortex/input.js';
import { motionNotice } from '../../src/cortex/fuser.js';
import { estopSocketPath, runtimeDir } from '../../src/paths.js';
import type { Plugins } from '../../src/cortex/plugins.js';
import { policyOf, resolvePolicy, type SafetyPolicy } from '../../src/safety/policy.js';
import { EstopGate } from './estop-gate.js';
import { BodyBoard } from '../../src/cortex/bodies.js';
import { ObstacleView, SPEED_LIMIT_KEY, SpeedLimit } from '../../src/safety/obstacle-view.js';
import type { GovernorInput } from './governor.js';
import { fileLatchStore, latchPath, type LatchStore } from './latch-store.js';
import type { SafetyStatus } from './status.js';

export interface SafetySetup {
  policy: SafetyPolicy;
  store: LatchStore;
  input: GovernorInput;
}

export interface SafetySetupOptions {
  config: AgentConfig;
  configName: string;
  bus: AgentBus;
  logger: Logger;
  now: () => number;
  stateDir: string;
  /** Where the e-stop socket goes (default `runtimeDir(stateDir)`); false: no socket. */
  runtimeDir?: string | false;
  /** The robot's things in this process: the simulated body the simulated lidar looks from, the speed limit the guard sets. */
  board?: BodyBoard;
  /** A recording or live Foxglove view (`--record`, `--foxglove`): the lidar's scans go to it. */
  media?: MediaTap;
}

/** The governor's input for a configuration, with the latch restored from the state directory. */
export function safetySetup(o: SafetySetupOptions): SafetySetup {
  const policy = resolvePolicy(o.config);
  const store = fileLatchStore(latchPath(o.stateDir, o.configName), (m) => {
    o.logger.error(m);
    o.bus.emit({ type: 'error', at: Date.now(), source: 'safety', message: m });
  });
  const sock = policy.estopSocket;
  const dir = o.runtimeDir === undefined ? runtimeDir(o.stateDir) : o.runtimeDir;
  const socket =
    sock.enabled && dir !== false
      ? { path: sock.path ?? estopSocketPath(dir, o.configName), ...(sock.group !== undefined ? { group: sock.group } : {}) }
      : undefined;
  const board = o.board ?? new BodyBoard();
  const lidar = o.config.lidar;
  const obstacles =
    policy.obstacle && lidar
      ? new ObstacleView(
          policy.obstacle,
          lidar.half_width_robot,
          board.of(SPEED_LIMIT_KEY, () => new SpeedLimit()),
        )
      : undefined;
  return {
    policy,
    store,
    input: {
      board,
      ...(lidar ? { lidar } : {}),
      ...(obstacles ? { obstacles } : {}),
      ...(o.media ? { media: o.media } : {}),
      policy,
      bus: o.bus,
      logger: o.logger.child({ actor: 'safety' }),
      now: o.now,
      mode: o.config.default_mode,
      latch: store.load(),
      persist: (latch) => store.save(latch),
      ...(socket ? { socket, gate: new EstopGate() } : {}),
    },
  };
}

/** The llm_labels of a mode's actions whose connector moves the robot. */
export function motionLabels(mode: ModeConfig, plugins: Pick<Plugins, 'descriptors'>): string[] {
  return mode.agent_actions.filter((a) => plugins.descriptors.actions.get(a.name)?.connectors.get(a.connector)?.motion === true).map((a) => a.llm_label);
}

/** The prompt line of `mode` for the governor's status, or undefined when motion is allowed. */
export function safetyNoticeOf(status: SafetyStatus, policy: SafetyPolicy, mode: string, labels: readonly string[]): string | undefined {
  const why = status.estop
    ? `emergency stop latched by ${status.estop.source}: ${status.estop.reason}; a person must release it`
    : status.stopping
      ? 'the agent is stopping'
      : !policyOf(policy, mode).motion
        ? `mode ${mode} forbids motion`
        : undefined;
  return motionNotice(labels, why);
}
