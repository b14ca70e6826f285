// Proves the simulated robot body: the pose follows move commands through the body connector, the battery drains, BodyInput reports and publishes it.
import { createNav2Connector } from '../../actors/actions/connectors/nav2.js';
import t from 'tap';
import { SimBody } from '../../devices/body/sim-body.js';
import { BodyBoard } from '../../src/cortex/bodies.js';
import { createBodyConnector } from '../../actors/actions/connectors/body.js';
import { BodyInput } from '../../actors/inputs/body-input.js';
import { BodyConnectorOptions, BodyInputSchema } from '../../src/plugins/schemas/body.js';
import pino from 'pino';

t.test('walking and turning move the pose; distance drains the battery', async (t) => {
  let now = 0;
  const body = new SimBody('generic', { start_battery_percent: 100, drain_percent_per_minute: 1 }, () => now);
  body.walk(1, 'walk forward');
  body.turn(90, 'turn left');
  const s = body.walk(2, 'walk forward');
  t.same([s.x, s.y, s.heading, s.distance], [1, 2, 90, 3]);
  now = 60_000;
  t.equal(body.read().battery_percent, 100 - 1 - 3 * 2);
  t.equal(body.turn(-270, 'turn right').heading, -180);
});

t.test('the body connector moves the shared body of its robot; halt stands still once', async (t) => {
  const lines: string[] = [];
  const bodies = new BodyBoard();
  const c = createBodyConnector(
    { robot: 'turtlebot4', step_m: 1, turn_deg: 90, command_seconds: 0 },
    { logger: pino({ level: 'silent' }), stateDir: '/tmp', write: (l) => lines.push(l), bodies },
  );
  const ac = new AbortController();
  await c.run({ action: 'walk forward' }, ac.signal);
  await c.run({ action: 'turn left' }, ac.signal);
  await c.run({ action: 'walk forward' }, ac.signal);
  await c.halt!();
  await c.halt!();
  t.same(lines, [
    '[turtlebot4] walk forward: x 1 m, y 0 m, heading 0 deg',
    '[turtlebot4] turn left: x 1 m, y 0 m, heading 90 deg',
    '[turtlebot4] walk forward: x 1 m, y 1 m, heading 90 deg',
    '[turtlebot4] stand still',
  ]);
  // BodyInput of the same robot reads the same body and publishes its odometry.
  const published: Array<Record<string, unknown>> = [];
  const input = new BodyInput(BodyInputSchema.parse({ robot: 'turtlebot4', facets: ['battery', 'odometry'] }), {
    bodies,
    logger: pino({ level: 'silent' }),
    signal: new AbortController().signal,
    publishContext: (v) => published.push(v),
  });
  const sub = input.listen().subscribe((raw) => input.rawToText(raw));
  t.teardown(() => (sub.unsubscribe(), input.stop()));
  t.match(input.formattedLatestBuffer(), /turtlebot4 \(simulated\): battery \d+%; at x 1 m, y 1 m, heading 90 deg, 2 m travelled, last move: stand still/);
  t.match(published[0], { odom_x: 1, odom_y: 1, odom_heading: 90, odom_distance: 2, moving: false });
});

t.test(
  'localization and navigation facets (OM1 AMCL / Navigation backgrounds): the map pose follows the body, navigation is idle until navigate_location drives it',
  async (t) => {
    const bodies = new BodyBoard();
    const c = createBodyConnector(
      { robot: 'limx_tron', step_m: 2, turn_deg: 90, command_seconds: 0 },
      { logger: pino({ level: 'silent' }), stateDir: '/tmp', write: () => {}, bodies },
    );
    const published: Array<Record<string, unknown>> = [];
    const input = new BodyInput(BodyInputSchema.parse({ robot: 'limx_tron', facets: ['localization', 'navigation'] }), {
      bodies,
      logger: pino({ level: 'silent' }),
      signal: new AbortController().signal,
      publishContext: (v) => published.push(v),
    });
    const sub = input.listen().subscribe((raw) => input.rawToText(raw));
    t.teardown(() => (sub.unsubscribe(), input.stop()));
    await c.run({ action: 'walk forward' }, new AbortController().signal);
    t.match(published.at(-1), { localized: true, map_x: 2, map_y: 0, map_heading: 0, navigating: false, navigation_status: 'idle' });
    t.notOk('battery_percent' in published.at(-1)!, 'only the facets asked for');
    t.match(input.formattedLatestBuffer(), /localized on the map at x 2 m, y 0 m, heading 0 deg; navigation idle \(no goal\)/);
    // navigate_location's nav2 connector drives the same body: the facet follows it there.
    const nav = createNav2Connector(
      { robot: 'limx_tron', locations: { dock: { x: 2, y: 0.5, heading: 90 } }, sim_speed_mps: 5 },
      { logger: pino({ level: 'silent' }), stateDir: '/tmp', write: () => {}, bodies },
    );
    await nav.run({ location: 'dock' }, new AbortController().signal);
    t.match(published.at(-1), { map_x: 2, map_y: 0.5, map_heading: 90, navigating: false, navigation_status: 'SUCCEEDED', navigation_goal: 'dock' });
    t.ok(
      published.some((v) => v.navigating === true && v.navigation_status === 'EXECUTING'),
      'navigating while on the way',
    );
    t.match(input.formattedLatestBuffer(), /navigation succeeded: at dock/);
  },
);

t.test('the board owns the bodies: a later agent on the same board keeps the pose (a reload); another board, or none, starts at the origin', async (t) => {
  const options = { robot: 'generic', step_m: 1, turn_deg: 90, command_seconds: 0 };
  const lines: string[] = [];
  const ctx = (bodies?: BodyBoard) => ({
    logger: pino({ level: 'silent' }),
    stateDir: '/tmp',
    write: (l: string) => lines.push(l),
    ...(bodies ? { bodies } : {}),
  });
  const kept = new BodyBoard();
  const signal = new AbortController().signal;
  await createBodyConnector(options, ctx(kept)).run({ action: 'walk forward' }, signal);
  await createBodyConnector(options, ctx(kept)).run({ action: 'walk forward' }, signal);
  await createBodyConnector(options, ctx(new BodyBoard())).run({ action: 'walk forward' }, signal);
  await createBodyConnector(options, ctx()).run({ action: 'walk forward' }, signal);
  t.same(lines, [
    '[generic] walk forward: x 1 m, y 0 m, heading 0 deg',
    '[generic] walk forward: x 2 m, y 0 m, heading 0 deg',
    '[generic] walk forward: x 1 m, y 0 m, heading 0 deg',
    '[generic] walk forward: x 1 m, y 0 m, heading 0 deg',
  ]);
});

t.test('a bus this build does not carry is refused with what it needs; DDS bindings are accepted for their robots', async (t) => {
  const r = BodyConnectorOptions.safeParse({ robot: 'limx_tron', binding: 'limx_sdk' });
  t.notOk(r.success);
  t.match(r.error?.issues[0]?.message, /^binding "limx_sdk" needs LimX Dynamics' robot SDK .*; use binding "sim"/);
  t.ok(BodyConnectorOptions.safeParse({ robot: 'unitree_go2', binding: 'unitree_dds' }).success, 'unitree_dds drives a Go2');
  t.ok(BodyConnectorOptions.safeParse({ robot: 'turtlebot4', binding: 'ros2_zenoh' }).success, "OM1's ros2_zenoh is taken (as ros2)");
  const wrong = BodyConnectorOptions.safeParse({ robot: 'turtlebot4', binding: 'unitree_dds' });
  t.match(wrong.error?.issues[0]?.message, /binding "unitree_dds" drives robot "unitree_go2" or "unitree_g1", not "turtlebot4"/);
  t.ok(BodyInputSchema.safeParse({ robot: 'unitree_go2' }).success, 'sim is the default');
});
