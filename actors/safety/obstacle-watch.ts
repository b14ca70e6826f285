// The governor's lidar child: holds the lidar in its session actor, feeds the obstacle guard each scan's clearance, keeps the newest scan for previews.
import type { Logger } from 'pino';
import type { Subscription } from 'rxjs';
import { fromCallback, type EventObject } from 'xstate';
import type { AgentBus } from '../../src/cortex/events.js';
import type { BodyBoard } from '../../src/cortex/bodies.js';
import type { LidarConfig } from '../../src/config/lidar.js';
import type { Travel } from '../../src/safety/obstacle.js';
import type { ObstacleView } from '../../src/safety/obstacle-view.js';
import { describeError } from '../../src/errors.js';
import type { MediaTap } from '../../src/cortex/input.js';
import { LATEST_SCAN_KEY, LatestScan } from '../../src/lidar/view.js';
import type { SessionInput } from '../streams/session-machine.js';

export interface LidarWatchInput {
  lidar: LidarConfig | undefined;
  /** The guard's view; absent when `safety.obstacle` is not set (the lidar then only feeds free paths). */
  view: ObstacleView | undefined;
  board: BodyBoard;
  logger: Logger;
  bus: AgentBus;
  /** A recording or live Foxglove view (`--record`, `--foxglove`): it gets every scan. */
  media?: MediaTap | undefined;
}

/** Sent to the governor once the watcher has the lidar: spawn its session, `input`, as the child `device:lidar`. */
export interface HoldLidarSession {
  type: 'safety.lidar.hold';
  input: SessionInput;
}

/** What the guard refuses now changed: the governor stops a running motion that goes that way. */
export interface ObstaclesChanged {
  type: 'safety.obstacles';
  blocked: Partial<Record<Travel, string>>;
}

/**
 * A child of the governor. The lidar is the process's shared one for the `lidar` block
 * (devices/lidar/make.ts; imported here, when the watcher starts, so drawing the governor loads no
 * device code), held by the session the governor runs as `device:lidar` (its states on the bus as
 * `stream` events of kind `lidar`, input `lidar`); the source's notices go on the bus as errors of
 * source `lidar`. With the guard on, every scan updates the view (clearance and speed shares) and a
 * timer of `max_scan_age_ms` after the newest scan makes it blind; the governor hears only when the
 * set of refused travels changes (`safety.obstacles`), never each scan.
 */
export const lidarWatchLogic = fromCallback<EventObject, LidarWatchInput>(({ input, sendBack }) => {
  const config = input.lidar;
  if (!config) return;
  const subs: Subscription[] = [];
  let stale: NodeJS.Timeout | undefined;
  let stopped = false;
  let said = '';
  const view = input.view;
  const tell = () => {
    if (!view) return;
    const blocked = view.blocked();
    const key = JSON.stringify(blocked);
    if (key === said) return;
    said = key;
    sendBack({ type: 'safety.obstacles', blocked } satisfies ObstaclesChanged);
  };
  const armStale = () => {
    if (!view) return;
    clearTimeout(stale);
    stale = setTimeout(() => {
      view.blind();
      tell();
    }, view.policy.maxScanAgeMs + 1);
  };
  Promise.all([import('../../devices/lidar/make.js'), import('../streams/device-session.js'), import('../../src/safety/obstacle.js')]).then(
    ([{ sharedLidar }, { deviceSessionInput, withStatesOnBus }, { clearanceOf }]) => {
      if (stopped) return;
      const lidar = sharedLidar(config, input.board, { logger: input.logger });
      subs.push(
        lidar.notices$.subscribe((message) => {
          input.logger.warn(message);
          input.bus.emit({ type: 'error', at: Date.now(), source: 'lidar', message });
        }),
      );
      // The newest scan for previews (WebSim's lidar panel asks for it), and every scan for a recording.
      const latest = input.board.of(LATEST_SCAN_KEY, () => new LatestScan());
      latest.source = lidar.name;
      const mounting = config.sensor_mounting_angle;
      subs.push(
        lidar.scans$.subscribe((scan) => {
          latest.scan = scan;
          input.media?.scan?.(scan, mounting);
        }),
      );
      if (view) {
        const look = Math.max(view.policy.slowM, view.halfWidthM) + 0.5;
        subs.push(
          lidar.scans$.subscribe((scan) => {
            view.update(clearanceOf(scan, config, look), scan.at);
            armStale();
            tell();
          }),
        );
        // Blind from the start: no motion until the first scan.
        armStale();
        tell();
      }
      const { initialMs, maxMs } = lidar.device.backoff;
      const timing = { backoffInitialMs: initialMs, backoffMaxMs: maxMs, breakerInitialMs: Math.min(2000, maxMs), breakerMaxMs: maxMs };
      sendBack({
        type: 'safety.lidar.hold',
        input: withStatesOnBus(deviceSessionInput(lidar.device, 'lidar', timing), input.bus, 'lidar'),
      } satisfies HoldLidarSession);
    },
    (err: unknown) => {
      const message = `lidar: ${describeError(err)}`;
      input.logger.error(message);
      input.bus.emit({ type: 'error', at: Date.now(), source: 'lidar', message });
    },
  );
  return () => {
    stopped = true;
    clearTimeout(stale);
    for (const s of subs) s.unsubscribe();
    input.bus.emit({ type: 'stream', at: Date.now(), kind: 'lidar', input: 'lidar', state: 'stopped' });
  };
});
