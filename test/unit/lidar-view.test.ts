// Proves what a person sees of a scan: Foxglove's LaserScan (even angles kept, an RPLidar's uneven revolution binned to its nearest returns, the mounting as the pose) and WebSim's preview (robot-frame points, OM1's paths, the guard's lines).
import t from 'tap';
import { laserScanMessage, scanPreview } from '../../src/lidar/view.js';
import type { Scan } from '../../src/lidar/scan.js';

/** The fields of a foxglove.LaserScan message read here. */
interface LaserScanJson {
  timestamp: { sec: number; nsec: number };
  frame_id: string;
  pose: { orientation: { x: number; y: number; z: number; w: number } };
  start_angle: number;
  end_angle: number;
  ranges: number[];
  intensities: number[];
}
const message = (scan: Scan, mounting: number) => laserScanMessage(scan, mounting) as unknown as LaserScanJson;

const geometry = { half_width_robot: 0.2, relevant_distance_max: 1.1, relevant_distance_min: 0.08, sensor_mounting_angle: 180, angles_blanked: [] };

/** n beams counter-clockwise from 0, a wall `front` m ahead of the sensor's zero and nothing elsewhere. */
function wallScan(n: number, front: number): Scan {
  const angles = new Float32Array(n);
  const ranges = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    angles[i] = (i * 2 * Math.PI) / n;
    const c = Math.cos(angles[i]!);
    ranges[i] = c > 0.2 ? front / c : Number.NaN;
  }
  return { at: 1_700_000_000_123, angles, ranges };
}

t.test("an evenly spaced scan keeps its angles; no return is 0; the time and frame are Foxglove's", async (t) => {
  const m = message(wallScan(360, 1.2), 180);
  t.equal(m.ranges.length, 360);
  t.equal(m.start_angle, 0);
  t.ok(Math.abs(m.end_angle - (359 * 2 * Math.PI) / 360) < 1e-5);
  t.equal(m.ranges[0], 1.2, 'straight ahead, rounded to 0.1 mm');
  t.equal(m.ranges[180], 0, 'behind: no return, written 0 (JSON has no NaN)');
  t.same(m.timestamp, { sec: 1_700_000_000, nsec: 123_000_000 });
  t.equal(m.frame_id, 'base_link');
  t.same(m.pose.orientation, { x: 0, y: 0, z: 0, w: 1 }, "mounting 180: the sensor's zero is the robot's forward");
  const turned = message(wallScan(8, 1), 90);
  // Mounting 90: a beam's robot angle is its sensor angle turned 90° counter-clockwise (+90° about z).
  t.ok(Math.abs(turned.pose.orientation.z - Math.sin(Math.PI / 4)) < 1e-9 && Math.abs(turned.pose.orientation.w - Math.cos(Math.PI / 4)) < 1e-9);
});

t.test("an RPLidar's revolution (clockwise, uneven) is binned over the full turn, each bin its nearest return", async (t) => {
  const angles = new Float32Array([-0.001, -0.02, -1.6, -1.61, -3.1, -4.7]);
  const ranges = new Float32Array([2, 1.5, 3, Number.NaN, 4, 5]);
  const m = message({ at: 0, angles, ranges, intensities: new Float32Array([10, 20, 30, 40, 50, 60]) }, 180);
  t.equal(m.ranges.length, 6);
  t.equal(m.start_angle, 0);
  t.ok(Math.abs(m.end_angle - (5 * 2 * Math.PI) / 6) < 1e-9);
  // Bin 0 (angle 0) holds the nearest of the two returns just clockwise of zero.
  t.equal(m.ranges[0], 1.5);
  t.equal(m.intensities[0], 20);
  t.equal(m.ranges.filter((r) => r > 0).length, 4, 'four bins have a return: ahead, right, behind, left');
});

t.test('the preview: robot-frame points in cm, the ten paths, the nearest return ahead and the guard lines', async (t) => {
  const p = scanPreview(wallScan(360, 0.6), 'simulated lidar of generic', geometry, { stopM: 0.4, slowM: 0.8 });
  t.equal(p.source, 'simulated lidar of generic');
  t.ok(
    p.points.some(([fwd, right]) => fwd === 60 && right === 0),
    'the wall point straight ahead at 60 cm',
  );
  t.ok(
    p.points.every(([fwd]) => fwd > 0),
    'nothing behind',
  );
  t.same(
    p.paths.map((x) => x.deg),
    [-60, -45, -30, -15, 0, 15, 30, 45, 60, 180],
  );
  t.notOk(p.paths.find((x) => x.deg === 0)!.free, 'the way ahead is blocked by the wall at 0.6 m');
  t.ok(p.paths.find((x) => x.deg === 180)!.free, 'the way back is free');
  t.equal(p.ahead_m, 0.6);
  t.same(p.guard, { stop_m: 0.4, slow_m: 0.8 });
  t.same(scanPreview(wallScan(360, 0.6), 'x', { ...geometry, simple_paths: true }).paths, [{ deg: 0, free: false }], 'simple paths: only ahead');
});
