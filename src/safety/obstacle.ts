// The obstacle guard's pure part: which way a motion value goes, how far the nearest return lies that way, and whether (and how fast) it may go.
import { robotPoints, type LidarGeometry, type Scan } from '../lidar/scan.js';

export interface ObstaclePolicy {
  /** Motion toward a return nearer than this is refused, and stopped while running. */
  stopM: number;
  /** Within this the speed is scaled down, to nothing at stopM. */
  slowM: number;
  /** A scan older than this is no scan: the robot is blind. */
  maxScanAgeMs: number;
}

/** Where a motion value takes the robot: a straight line, a turn in place, or nowhere (sit, dance, stand still). */
export type Heading = 'forward' | 'back' | 'left' | 'right';
export type Travel = Heading | 'turn' | 'none';

/**
 * The travel of a motion value, from its words: forward/ahead, back, strafe or step left/right, turn
 * or rotate. A turn is a turn in place; "left"/"right" alone is a turn (the move action's
 * `turn left`). Anything else moves no base.
 */
export function travelOf(value: string): Travel {
  const v = value.toLowerCase();
  if (/\b(turn|rotate|spin)\b/.test(v)) return 'turn';
  if (/forward|ahead|advance/.test(v)) return 'forward';
  if (/\bback|backward|retreat|reverse/.test(v)) return 'back';
  if (/\b(strafe|step|slide|sidestep|move|walk|go)\b.*\bleft\b/.test(v)) return 'left';
  if (/\b(strafe|step|slide|sidestep|move|walk|go)\b.*\bright\b/.test(v)) return 'right';
  if (/\bleft\b|\bright\b/.test(v)) return 'turn';
  return 'none';
}

/** The nearest return, m, in each straight heading within the robot's width, and the nearest in any direction (what a turn sweeps). */
export interface Clearance {
  forward: number;
  back: number;
  left: number;
  right: number;
  nearest: number;
}

/**
 * The clearance of `scan` up to `lookM`: the corridor of a heading is as wide as the robot
 * (2 x half_width_robot) and its distance is the nearest return's along it, from the sensor.
 */
export function clearanceOf(scan: Scan, g: LidarGeometry, lookM: number): Clearance {
  const p = robotPoints(scan, g, lookM);
  const hw = g.half_width_robot;
  const c: Clearance = { forward: Infinity, back: Infinity, left: Infinity, right: Infinity, nearest: Infinity };
  for (let k = 0; k < p.n; k++) {
    const f = p.fwd[k]!;
    const r = p.right[k]!;
    if (p.d[k]! < c.nearest) c.nearest = p.d[k]!;
    if (Math.abs(r) <= hw) {
      if (f > 0 && f < c.forward) c.forward = f;
      else if (f < 0 && -f < c.back) c.back = -f;
    }
    if (Math.abs(f) <= hw) {
      if (r > 0 && r < c.right) c.right = r;
      else if (r < 0 && -r < c.left) c.left = -r;
    }
  }
  return c;
}

/** Below this share of its speed a motion is stopped rather than crept: the guard's stop line is stopM plus a tenth of the slow zone. */
export const MIN_SCALE = 0.1;

/** 1 beyond slowM, falling linearly to 0 at stopM. */
export function speedScale(d: number, p: ObstaclePolicy): number {
  if (d >= p.slowM) return 1;
  if (p.slowM <= p.stopM) return d > p.stopM ? 1 : 0;
  return Math.max(0, Math.min(1, (d - p.stopM) / (p.slowM - p.stopM)));
}

const WHERE: Record<Heading, string> = { forward: 'ahead', back: 'behind', left: 'to the left', right: 'to the right' };
const metres = (d: number) => `${Math.round(d * 100) / 100} m`;

export type ObstacleVerdict = { ok: true; scale: number } | { ok: false; reason: string };

/**
 * May a motion of `travel` go, with this clearance taken at `scanAt` (null: no scan yet)? Blind
 * (no scan, or one older than maxScanAgeMs): only a motion that moves no base. A straight heading:
 * refused when its scaled speed would be under MIN_SCALE, else allowed at that scale. A turn in
 * place: refused only when a return lies within the robot's half width (it would sweep it); turning
 * away from a wall is allowed.
 */
export function obstacleVerdict(
  p: ObstaclePolicy,
  travel: Travel,
  clearance: Clearance | null,
  scanAt: number,
  now: number,
  halfWidthM: number,
): ObstacleVerdict {
  if (travel === 'none') return { ok: true, scale: 1 };
  if (!clearance || now - scanAt > p.maxScanAgeMs) {
    const age = clearance ? `no lidar scan for ${Math.round((now - scanAt) / 100) / 10} s` : 'no lidar scan yet';
    return { ok: false, reason: `${age} (blind): no motion toward space the lidar cannot see` };
  }
  if (travel === 'turn') {
    return clearance.nearest < halfWidthM
      ? { ok: false, reason: `obstacle ${metres(clearance.nearest)} away, within the robot's turning width` }
      : { ok: true, scale: 1 };
  }
  const d = clearance[travel];
  const scale = speedScale(d, p);
  if (scale < MIN_SCALE) return { ok: false, reason: `obstacle ${metres(d)} ${WHERE[travel]}` };
  return { ok: true, scale };
}
