// What a person sees of the lidar: the newest scan for previews (WebSim's panel), its robot-frame points and free paths, and Foxglove's LaserScan.
import { PATH_ANGLES, freePaths } from './paths.js';
import { robotPoints, type LidarGeometry, type Scan } from './scan.js';

/** The key of the newest scan on the robot's board (src/cortex/bodies.ts): the lidar's holder writes it, previews read it. */
export const LATEST_SCAN_KEY = 'lidar:latest';

/** The newest scan of the robot's lidar (a reference, replaced per revolution: nothing is copied or queued). */
export class LatestScan {
  scan: Scan | undefined;
  /** What the lidar is (`RPLidar on /dev/ttyUSB0`). */
  source = '';
}

/** How far the preview draws, m. */
const PREVIEW_RANGE_M = 6;
/** At most this many points go to a page (every other beam of a dense scan). */
const PREVIEW_POINTS = 720;

/** WebSim's lidar panel: the robot at the origin facing up, metres forward and to the right. */
export interface ScanPreview {
  at: number;
  source: string;
  /** Returns within PREVIEW_RANGE_M as [forward, right] in cm (integers: small on the socket). */
  points: Array<[number, number]>;
  /** OM1's paths: degrees clockwise from forward, whether free. */
  paths: Array<{ deg: number; free: boolean }>;
  /** Path length and the robot's half width, m (the drawing's corridor). */
  path_m: number;
  half_width_m: number;
  /** The nearest return ahead within the robot's width, m; null when none within relevant_distance_max. */
  ahead_m: number | null;
  /** The obstacle guard's lines, m, when the guard is on. */
  guard?: { stop_m: number; slow_m: number };
}

/** The preview of `scan` (see ScanPreview). */
export function scanPreview(scan: Scan, source: string, g: LidarGeometry & { simple_paths?: boolean }, guard?: { stopM: number; slowM: number }): ScanPreview {
  const p = robotPoints(scan, g, PREVIEW_RANGE_M);
  const step = Math.max(1, Math.ceil(p.n / PREVIEW_POINTS));
  const points: Array<[number, number]> = [];
  for (let k = 0; k < p.n; k += step) points.push([Math.round(p.fwd[k]! * 100), Math.round(p.right[k]! * 100)]);
  const f = freePaths(scan, g);
  const judged = g.simple_paths ? [4] : PATH_ANGLES.map((_, i) => i);
  return {
    at: scan.at,
    source,
    points,
    paths: judged.map((i) => ({ deg: PATH_ANGLES[i]!, free: f.free.includes(i) })),
    path_m: 1,
    half_width_m: g.half_width_robot,
    ahead_m: f.aheadM,
    ...(guard ? { guard: { stop_m: guard.stopM, slow_m: guard.slowM } } : {}),
  };
}

/** Metres to a tenth of a millimetre (a float32 range printed in full is 18 characters in JSON). */
const mm10 = (r: number) => Math.round(r * 1e4) / 1e4;

/**
 * `scan` as Foxglove's `foxglove.LaserScan` (JSON encoding): ranges at equally spaced angles from
 * `start_angle` to `end_angle` (counter-clockwise radians in the sensor's frame), the sensor's frame
 * turned to the robot's (`base_link`, x forward) by `pose` as `sensor_mounting_angle` says. A scan
 * whose angles are not equally spaced (an RPLidar's revolution) is put into as many equal bins over
 * the full turn, each keeping its nearest return. A beam without a return is 0: JSON has no NaN
 * (Foxglove's 3D panel draws it at the sensor).
 */
export function laserScanMessage(scan: Scan, sensorMountingDeg: number): Record<string, unknown> {
  const n = scan.ranges.length;
  let start = n > 0 ? scan.angles[0]! : 0;
  let end = n > 0 ? scan.angles[n - 1]! : 0;
  const step = n > 1 ? (end - start) / (n - 1) : 0;
  let even = n > 1 && step !== 0;
  for (let i = 1; even && i < n; i++) if (Math.abs(scan.angles[i]! - (start + i * step)) > 1e-3) even = false;
  let ranges: number[];
  let intensities: number[] = [];
  if (even || n <= 1) {
    ranges = Array.from(scan.ranges, (r) => (Number.isFinite(r) ? mm10(r) : 0));
    if (scan.intensities) intensities = Array.from(scan.intensities);
  } else {
    const bins = new Float64Array(n).fill(Number.POSITIVE_INFINITY);
    const binQ = scan.intensities ? new Float64Array(n) : undefined;
    const TAU = 2 * Math.PI;
    for (let i = 0; i < n; i++) {
      const r = scan.ranges[i]!;
      if (!Number.isFinite(r)) continue;
      const a = ((scan.angles[i]! % TAU) + TAU) % TAU;
      const b = Math.min(n - 1, Math.round((a / TAU) * n) % n);
      if (r < bins[b]!) {
        bins[b] = r;
        if (binQ && scan.intensities) binQ[b] = scan.intensities[i]!;
      }
    }
    ranges = Array.from(bins, (r) => (Number.isFinite(r) ? mm10(r) : 0));
    if (binQ) intensities = Array.from(binQ);
    start = 0;
    end = (TAU * (n - 1)) / n;
  }
  // Robot angle (counter-clockwise) = sensor angle - (mounting - 180°): a turn about z.
  const yaw = (-(sensorMountingDeg - 180) * Math.PI) / 180;
  return {
    timestamp: { sec: Math.floor(scan.at / 1000), nsec: Math.round((scan.at % 1000) * 1e6) },
    frame_id: 'base_link',
    pose: { position: { x: 0, y: 0, z: 0 }, orientation: { x: 0, y: 0, z: Math.sin(yaw / 2), w: Math.cos(yaw / 2) } },
    start_angle: start,
    end_angle: end,
    ranges,
    intensities,
  };
}
