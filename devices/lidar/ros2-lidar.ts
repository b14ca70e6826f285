// A lidar over ROS 2: `sensor_msgs/LaserScan` on a topic of the DDS layer, opened by a session-machine actor while scans arrive.
import type { Logger } from 'pino';
import { Subject, type Subscription } from 'rxjs';
import { LinkEnd, type OpenableDevice } from '../device-link.js';
import { DeviceError } from '../device-error.js';
import { DdsParticipant } from '../dds/participant.js';
import { DdsError } from '../dds/addon.js';
import { ddsTopic } from '../dds/ros2/base.js';
import type { Ros2LidarConfig } from '../../src/config/lidar.js';
import type { Scan } from '../../src/lidar/scan.js';
import { describeError } from '../../src/errors.js';
import type { LidarSource } from './source.js';

/** `sensor_msgs/msg/LaserScan` as @foxglove/rosmsg2-serialization decodes it (the fields read here). */
export interface LaserScanMessage {
  header: { stamp: { sec: number; nanosec: number }; frame_id: string };
  angle_min: number;
  angle_max: number;
  angle_increment: number;
  range_min: number;
  range_max: number;
  ranges: Float32Array | number[];
  intensities: Float32Array | number[];
}

/** Most beams a scan may have (a 0.1° sensor has 3600); more is a malformed message, not a lidar. */
const MAX_BEAMS = 16_384;

/**
 * A LaserScan as a Scan, or why it cannot be one. Angles are `angle_min + i * angle_increment`
 * (counter-clockwise radians, as Scan wants); a range outside [range_min, range_max] or not finite
 * (+Inf: nothing within range, -Inf: too near, NaN: no return, REP 117) is NaN, "no return". The
 * time is this process's clock when the scan arrived (the robot's clock may differ from ours).
 */
export function scanOfLaserScan(m: LaserScanMessage, at: number): Scan | string {
  const n = m.ranges.length;
  if (n === 0) return 'a LaserScan with no ranges';
  if (n > MAX_BEAMS) return `a LaserScan with ${n} ranges (at most ${MAX_BEAMS})`;
  if (!Number.isFinite(m.angle_min) || !Number.isFinite(m.angle_increment) || m.angle_increment === 0)
    return `a LaserScan with angle_min ${m.angle_min} and angle_increment ${m.angle_increment}`;
  const lo = Number.isFinite(m.range_min) ? m.range_min : 0;
  const hi = Number.isFinite(m.range_max) && m.range_max > 0 ? m.range_max : Number.POSITIVE_INFINITY;
  const angles = new Float32Array(n);
  const ranges = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    angles[i] = m.angle_min + i * m.angle_increment;
    const r = m.ranges[i]!;
    ranges[i] = Number.isFinite(r) && r >= lo && r <= hi ? r : Number.NaN;
  }
  const scan: Scan = { at, angles, ranges };
  if (m.intensities.length === n) scan.intensities = Float32Array.from(m.intensities);
  return scan;
}

const failure = (message: string, fatal = false) => new DeviceError('lidar', message, { code: 'lidar_failed', fatal });

/**
 * The source. `connect` joins the DDS domain (the process's shared participant), subscribes to the
 * topic and resolves once a first scan arrives, so a robot that does not publish is a failed open the
 * session retries with its backoff (and says why: no LaserScan on rt/scan on domain N). While open, a
 * topic silent for `lost_after_ms` ends the run ("lost the lidar"), which the guard sees as blind and
 * the session reopens. A malformed scan is skipped and said on `notices$` (at most every 5 s). A
 * missing DDS addon is fatal: reopening cannot build it.
 */
export function createRos2Lidar(config: Ros2LidarConfig, ctx: { logger?: Logger } = {}): LidarSource {
  const topic = ddsTopic(config.topic);
  const scans = new Subject<Scan>();
  const notices = new Subject<string>();
  const name = `LaserScan on ${config.topic} over ROS 2`;
  let noticeAt = 0;
  const notice = (text: string) => {
    const now = Date.now();
    if (now - noticeAt < 5000) return;
    noticeAt = now;
    notices.next(`${name}: ${text}`);
  };

  const device: OpenableDevice = {
    backoff: { initialMs: config.reopen_initial_ms, maxMs: config.reopen_max_ms },
    attach: () => () => undefined,
    connect: (signal) =>
      new Promise((resolve, reject) => {
        let participant: DdsParticipant;
        try {
          participant = DdsParticipant.open({ domain: config.domain_id, networkInterface: config.network_interface });
        } catch (err) {
          const fatal = err instanceof DdsError && err.code === 'dds_unavailable';
          return reject(failure(`${name}: ${describeError(err)}`, fatal));
        }
        const domain = participant.domain;
        const end = new LinkEnd();
        let sub: Subscription | undefined;
        let lastAt = 0;
        let opened = false;
        let watch: NodeJS.Timeout | undefined;
        const finish = () => {
          clearInterval(watch);
          sub?.unsubscribe();
          sub = undefined;
          participant.close();
        };
        const onAbort = () => {
          finish();
          reject(failure(`${name}: no LaserScan on ${topic} on DDS domain ${domain} (is the robot's lidar driver running, on this domain?)`));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        try {
          sub = participant.subscribe<LaserScanMessage>(topic, 'sensor_msgs/msg/LaserScan').subscribe({
            next: (m) => {
              const scan = scanOfLaserScan(m, Date.now());
              if (typeof scan === 'string') return notice(`skipped ${scan}`);
              lastAt = scan.at;
              if (!opened) {
                opened = true;
                signal.removeEventListener('abort', onAbort);
                watch = setInterval(
                  () => {
                    const silent = Date.now() - lastAt;
                    if (silent >= config.lost_after_ms)
                      end.end({
                        type: 'close',
                        code: 1006,
                        reason: `lost the lidar: no LaserScan on ${topic} for ${(silent / 1000).toFixed(1)} s on DDS domain ${domain}`,
                      });
                  },
                  Math.max(50, config.lost_after_ms / 4),
                );
                resolve({
                  bufferedAmount: () => 0,
                  subscribe: (listener) => end.subscribe(listener),
                  close: () => {
                    finish();
                    end.end({ type: 'close', code: 1000, reason: 'closed' });
                  },
                });
              }
              scans.next(scan);
            },
            error: (err: unknown) => end.end({ type: 'close', code: 1006, reason: `${name}: ${describeError(err)}` }),
          });
        } catch (err) {
          signal.removeEventListener('abort', onAbort);
          finish();
          reject(failure(`${name}: ${describeError(err)}`));
        }
        ctx.logger?.debug(`${name}: subscribed to ${topic} on DDS domain ${domain}`);
      }),
  };
  return {
    name,
    device,
    scans$: scans.asObservable(),
    notices$: notices.asObservable(),
    end: () => {
      scans.complete();
      notices.complete();
    },
  };
}
