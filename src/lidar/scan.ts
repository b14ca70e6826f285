// One lidar scan as every source gives it (angles and ranges at a time) and the robot-frame points the free paths and the obstacle guard read.

/**
 * One revolution of a 2D lidar, the shape every source produces (the RPLidar driver, the simulated
 * body, a `sensor_msgs/LaserScan` over ROS 2). Angles are in the sensor's frame, radians,
 * counter-clockwise from the sensor's zero (REP 103, as LaserScan); ranges in metres, NaN where the
 * beam had no return. Both arrays have one entry per beam.
 */
export interface Scan {
  /** When the revolution ended, ms since the epoch (the clock of the process that read it). */
  at: number;
  angles: Float32Array;
  ranges: Float32Array;
  /** Signal quality per beam (RPLidar: 0..63), when the source has it. */
  intensities?: Float32Array;
}

/** How the sensor sits on the robot and which returns count (OM1's RPLidar options, same names and meaning). */
export interface LidarGeometry {
  /** Half the robot's width, m: a path is free when no return lies nearer than this to its centre line. */
  half_width_robot: number;
  /** Returns farther than this, m, are ignored (free paths only: the guard looks as far as its slow distance). */
  relevant_distance_max: number;
  /** Returns nearer than this, m, are ignored (the robot's own body, dust on the window). */
  relevant_distance_min: number;
  /**
   * Degrees from the sensor's zero to the robot's rear, clockwise (OM1's convention): 180 means the
   * sensor's zero points forward. A beam's robot angle is `sensor angle (clockwise) + this - 180`.
   */
  sensor_mounting_angle: number;
  /** Robot-frame ranges [from, to] in degrees, -180..180 clockwise from forward, whose returns are ignored (a mast, a handle). */
  angles_blanked: ReadonlyArray<readonly [number, number]>;
}

/**
 * The returns of a scan in the robot's frame: `fwd` metres ahead, `right` metres to the right, `deg`
 * the robot angle (clockwise from forward, -180..180), `d` the range. Blanked angles and returns
 * outside [relevant_distance_min, maxRange] are left out; NaN ranges too.
 */
export interface RobotPoints {
  fwd: Float32Array;
  right: Float32Array;
  deg: Float32Array;
  d: Float32Array;
  n: number;
}

const DEG = 180 / Math.PI;

/** -180..180. */
export function wrapDeg(deg: number): number {
  let d = deg % 360;
  if (d > 180) d -= 360;
  else if (d <= -180) d += 360;
  return d;
}

/** The robot-frame points of `scan` within `maxRange` metres (see RobotPoints). */
export function robotPoints(scan: Scan, g: LidarGeometry, maxRange: number): RobotPoints {
  const n = scan.ranges.length;
  const out: RobotPoints = { fwd: new Float32Array(n), right: new Float32Array(n), deg: new Float32Array(n), d: new Float32Array(n), n: 0 };
  const offset = g.sensor_mounting_angle - 180;
  const blanked = g.angles_blanked;
  for (let i = 0; i < n; i++) {
    const d = scan.ranges[i]!;
    if (!(d >= g.relevant_distance_min && d <= maxRange)) continue;
    // The sensor's angle is counter-clockwise; OM1's robot angle runs clockwise.
    const deg = wrapDeg(-scan.angles[i]! * DEG + offset);
    let skip = false;
    for (const [from, to] of blanked) {
      if (deg >= from && deg <= to) {
        skip = true;
        break;
      }
    }
    if (skip) continue;
    const rad = deg / DEG;
    const k = out.n++;
    out.fwd[k] = d * Math.cos(rad);
    out.right[k] = d * Math.sin(rad);
    out.deg[k] = deg;
    out.d[k] = d;
  }
  return out;
}
