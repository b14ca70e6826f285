// Free paths from a scan, as OM1 means them: ten straight 1 m paths around the robot
// A path is free when no relevant return lies within half the robot's width of it.
import { robotPoints, type LidarGeometry, type Scan } from './scan.js';

/** OM1's paths, degrees clockwise from forward: three to the left, three ahead, three to the right, and straight back. */
export const PATH_ANGLES = [-60, -45, -30, -15, 0, 15, 30, 45, 60, 180] as const;
const PATH_LENGTH_M = 1;

export interface FreePaths {
  /** Indexes into PATH_ANGLES of the free paths. */
  free: number[];
  turnLeft: boolean;
  advance: boolean;
  turnRight: boolean;
  retreat: boolean;
  /** Directions in the words of `paths_clear`: `forward`, `left`, `right`, `back`. */
  clear: Array<'forward' | 'left' | 'right' | 'back'>;
  /** The nearest relevant return ahead (within the robot's width), m; null when none within relevant_distance_max. */
  aheadM: number | null;
}

/** Distance from (px, py) to the segment (0,0)-(x2, y2). */
function toSegment(px: number, py: number, x2: number, y2: number): number {
  const len2 = x2 * x2 + y2 * y2;
  const t = Math.max(0, Math.min(1, (px * x2 + py * y2) / len2));
  const dx = px - t * x2;
  const dy = py - t * y2;
  return Math.sqrt(dx * dx + dy * dy);
}

/**
 * The free paths of `scan`: returns between relevant_distance_min and relevant_distance_max, outside
 * angles_blanked, turned to the robot's frame by sensor_mounting_angle; a path is blocked by any such
 * return nearer than half_width_robot to it. With `simple_paths` only the straight-ahead path is
 * judged (a robot that can always turn in place). Paths 0-2 make "turn left", 3-5 "advance", 6-8
 * "turn right", 9 "retreat", as OM1 groups them. (OM1 reads angles_blanked but its loop never skips
 * the blanked returns; here they are skipped, as its documentation says.)
 */
export function freePaths(scan: Scan, g: LidarGeometry & { simple_paths?: boolean }): FreePaths {
  const p = robotPoints(scan, g, g.relevant_distance_max);
  const candidates = g.simple_paths ? [4] : PATH_ANGLES.map((_, i) => i);
  const ends = PATH_ANGLES.map((deg) => [PATH_LENGTH_M * Math.cos((deg * Math.PI) / 180), PATH_LENGTH_M * Math.sin((deg * Math.PI) / 180)] as const);
  const free: number[] = [];
  for (const i of candidates) {
    const [ef, er] = ends[i]!;
    let blocked = false;
    for (let k = 0; k < p.n && !blocked; k++) if (toSegment(p.fwd[k]!, p.right[k]!, ef, er) < g.half_width_robot) blocked = true;
    if (!blocked) free.push(i);
  }
  let ahead = Number.POSITIVE_INFINITY;
  for (let k = 0; k < p.n; k++) if (p.fwd[k]! > 0 && Math.abs(p.right[k]!) <= g.half_width_robot && p.fwd[k]! < ahead) ahead = p.fwd[k]!;
  const turnLeft = g.simple_paths ? true : free.some((i) => i < 3);
  const advance = free.some((i) => i >= 3 && i <= 5);
  const turnRight = g.simple_paths ? true : free.some((i) => i >= 6 && i <= 8);
  const retreat = free.includes(9);
  const clear: FreePaths['clear'] = [];
  if (advance) clear.push('forward');
  if (turnLeft) clear.push('left');
  if (turnRight) clear.push('right');
  if (retreat) clear.push('back');
  return { free, turnLeft, advance, turnRight, retreat, clear, aheadM: Number.isFinite(ahead) ? Math.round(ahead * 100) / 100 : null };
}

/** The prompt's sentence (OM1's, in this runtime's move words). */
export function describePaths(f: FreePaths): string {
  const moves: string[] = [];
  if (f.turnLeft) moves.push("'turn left'");
  if (f.advance) moves.push("'walk forward'");
  if (f.turnRight) moves.push("'turn right'");
  if (f.retreat) moves.push("'walk back'");
  if (moves.length === 0) return 'You are surrounded by objects and cannot safely move in any direction. DO NOT MOVE.';
  const near = f.aheadM !== null ? ` The nearest obstacle ahead is ${f.aheadM} m away.` : '';
  return `The safe movement directions are: {${[...moves, "'stand still'"].join(', ')}}.${near}`;
}
