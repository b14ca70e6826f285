// Free paths with OM1's meaning (mounting angle, blanked angles, half width) and the obstacle guard's verdicts, on scans built by hand.
import t from 'tap';
import { freePaths } from '../../src/lidar/paths.js';
import type { Scan } from '../../src/lidar/scan.js';
import { clearanceOf, obstacleVerdict, travelOf } from '../../src/safety/obstacle.js';
import { AgentConfig } from '../../src/config/schema.js';
import { checkLidarNeeds } from '../../src/config/safety-check.js';

/** A scan of a box room: distances to the walls ahead/behind/left/right of the sensor's zero (clockwise angles, as an RPLidar). */
function box(front: number, back = 3, left = 3, right = 3): Scan {
  const n = 360;
  const angles = new Float32Array(n);
  const ranges = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const r = (i * Math.PI) / 180;
    angles[i] = -r;
    const f = Math.cos(r);
    const s = Math.sin(r);
    let d = Infinity;
    if (f > 1e-9) d = Math.min(d, front / f);
    if (f < -1e-9) d = Math.min(d, back / -f);
    if (s > 1e-9) d = Math.min(d, right / s);
    if (s < -1e-9) d = Math.min(d, left / -s);
    ranges[i] = d;
  }
  return { at: 0, angles, ranges };
}
const g = {
  half_width_robot: 0.2,
  relevant_distance_max: 1.1,
  relevant_distance_min: 0.08,
  sensor_mounting_angle: 180,
  angles_blanked: [] as Array<[number, number]>,
};

t.test('a wall 0.5 m ahead blocks the paths ahead; the side and back paths stay free', async (t) => {
  const f = freePaths(box(0.5), g);
  t.notOk(f.advance);
  t.ok(f.retreat);
  t.same(f.clear.includes('forward'), false);
  t.equal(f.aheadM, 0.5);
  t.same(freePaths(box(3), g).clear, ['forward', 'left', 'right', 'back'], 'an open room: every path');
});

t.test('sensor_mounting_angle turns the scan: a sensor mounted backwards sees the wall behind the robot', async (t) => {
  const f = freePaths(box(0.5), { ...g, sensor_mounting_angle: 0 });
  t.ok(f.advance, 'ahead is free');
  t.notOk(f.retreat, 'the wall is behind');
});

t.test('angles_blanked removes returns (a mast): the wall ahead is not seen through the blanked range', async (t) => {
  t.ok(freePaths(box(0.5), { ...g, angles_blanked: [[-90, 90]] }).advance);
});

t.test('the guard: refuses toward a wall inside stop, slows within slow, allows turns and motions that move no base; blind refuses', async (t) => {
  const p = { stopM: 0.4, slowM: 0.8, maxScanAgeMs: 500 };
  const near = clearanceOf(box(0.35), g, 1.5);
  t.match(obstacleVerdict(p, travelOf('walk forward'), near, 0, 100, 0.2), { ok: false, reason: 'obstacle 0.35 m ahead' });
  t.match(obstacleVerdict(p, travelOf('turn left'), near, 0, 100, 0.2), { ok: true });
  t.match(obstacleVerdict(p, travelOf('walk back'), near, 0, 100, 0.2), { ok: true, scale: 1 });
  t.match(obstacleVerdict(p, travelOf('dance'), null, 0, 100, 0.2), { ok: true });
  const mid = obstacleVerdict(p, 'forward', clearanceOf(box(0.6), g, 1.5), 0, 100, 0.2);
  t.ok(mid.ok && mid.scale > 0.4 && mid.scale < 0.6, JSON.stringify(mid));
  t.match(obstacleVerdict(p, 'forward', clearanceOf(box(3), g, 1.5), 0, 700, 0.2), { ok: false, reason: /blind/ });
  t.match(obstacleVerdict(p, 'turn', null, 0, 0, 0.2), { ok: false, reason: /no lidar scan yet/ });
});

t.test('check: the guard and LidarInput without a lidar block are problems where they are written', async (t) => {
  const config = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'x',
    default_mode: 'a',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    modes: { a: { display_name: 'A', description: '', system_prompt_base: '', hertz: 1, agent_inputs: [{ type: 'LidarInput' }] } },
    safety: { obstacle: { stop_distance_m: 0.4, slow_distance_m: 0.8 } },
  });
  t.same(
    checkLidarNeeds(config).map((p) => p.path.join('.')),
    ['safety.obstacle', 'modes.a.agent_inputs.0.type'],
  );
  t.throws(() => AgentConfig.parse({ ...config, safety: { obstacle: { stop_distance_m: 0.8, slow_distance_m: 0.4 } } }), /slow_distance_m must be at least/);
});
