// Proves the DDS layer against real CycloneDDS peers on loopback (built with idlc + gcc): CDR bytes out and in, decoded ROS 2 and Unitree messages (the G1's BMS too), matched counts.
import t from 'tap';
import { firstValueFrom, filter, take, timeout, toArray } from 'rxjs';
import { DdsParticipant } from '../../devices/dds/participant.js';
import { ddsBodyOf } from '../../devices/dds/bodies.js';
import { freshDomain, startPeer, useLoopback } from '../helpers/dds-peers.js';

const domain = freshDomain();
useLoopback(domain);

t.test('a ROS 2 base: a Twist reaches it, its odometry and battery come back decoded', async (t) => {
  const base = await startPeer('ros2_base', domain);
  t.teardown(() => base.stop());
  const p = DdsParticipant.open({});
  t.teardown(() => p.close());
  t.equal(p.domain, domain, 'ROS_DOMAIN_ID chose the domain');
  const cmd = p.writer('rt/cmd_vel', 'geometry_msgs/msg/Twist');
  await firstValueFrom(
    cmd.matched$.pipe(
      filter((n) => n > 0),
      timeout(15_000),
    ),
  );
  cmd.publish({ linear: { x: 0.25, y: 0, z: 0 }, angular: { x: 0, y: 0, z: 0.5 } });
  t.match(await base.waitLine(/^cmd_vel /), /^cmd_vel 0\.250 0\.000 0\.500$/);

  const odom = await firstValueFrom(
    p
      .subscribe<{ header: { frame_id: string }; pose: { pose: { position: { x: number } } }; twist: { twist: { angular: { z: number } } } }>(
        'rt/odom',
        'nav_msgs/msg/Odometry',
      )
      .pipe(
        filter((o) => o.twist.twist.angular.z > 0.4),
        timeout(15_000),
      ),
  );
  t.equal(odom.header.frame_id, 'odom');
  t.ok(odom.pose.pose.position.x >= 0, 'the base integrates what it was told');
  const battery = await firstValueFrom(
    p.subscribe<{ percentage: number; location: string; present: boolean }>('rt/battery_state', 'sensor_msgs/msg/BatteryState').pipe(timeout(15_000)),
  );
  t.equal(Math.round(battery.percentage * 100), 87);
  t.equal(battery.location, 'base');
  t.equal(battery.present, true);
});

t.test('a Go2: a sport API request is answered with its id; sportmodestate and lowstate decode', async (t) => {
  const go2 = await startPeer('go2', domain);
  t.teardown(() => go2.stop());
  const p = DdsParticipant.open({});
  t.teardown(() => p.close());
  const responses = p.reader<{ header: { identity: { id: bigint; api_id: bigint }; status: { code: number } } }>(
    'rt/api/sport/response',
    'unitree_api/msg/Response_',
  );
  t.teardown(() => responses.close());
  const req = p.writer('rt/api/sport/request', 'unitree_api/msg/Request_');
  await firstValueFrom(
    req.matched$.pipe(
      filter((n) => n > 0),
      timeout(15_000),
    ),
  );
  await firstValueFrom(
    responses.matched$.pipe(
      filter((n) => n > 0),
      timeout(15_000),
    ),
  );
  const answered = firstValueFrom(
    responses.messages$.pipe(
      filter((r) => r.header.identity.id === 42n),
      timeout(15_000),
    ),
  );
  req.publish({ header: { identity: { id: 42n, api_id: 1008n } }, parameter: '{"x":0.3,"y":0,"z":-0.4}' });
  t.equal(await go2.waitLine(/^api 1008 /), 'api 1008 {"x":0.3,"y":0,"z":-0.4}');
  const r = await answered;
  t.equal(r.header.identity.api_id, 1008n);
  t.equal(r.header.status.code, 0);

  const states = await firstValueFrom(
    p.subscribe<{ velocity: Float32Array; yaw_speed: number; body_height: number }>('rt/sportmodestate', 'unitree_go/msg/SportModeState_').pipe(
      filter((s) => s.yaw_speed < -0.3),
      take(1),
      toArray(),
      timeout(15_000),
    ),
  );
  t.equal(Math.round(states[0]!.velocity[0]! * 10) / 10, 0.3, 'vx of the Move, decoded at its IDL offset');
  t.equal(Math.round(states[0]!.body_height * 100) / 100, 0.32);
  const low = await firstValueFrom(
    p.subscribe<{ bms_state: { soc: number; current: number }; power_v: number }>('rt/lowstate', 'unitree_go/msg/LowState_').pipe(timeout(15_000)),
  );
  t.equal(low.bms_state.soc, 76);
  t.equal(low.bms_state.current, -1200);
  t.equal(Math.round(low.power_v * 10) / 10, 28.4, 'the last fields decode too: the layout is byte-exact');
});

t.test("a G1's battery: unitree_hg BmsState_ on rt/lf/bmsstate decodes byte-exact, and a unitree_g1 body reports its soc", async (t) => {
  const peer = await startPeer('go2', domain);
  t.teardown(() => peer.stop());
  const p = DdsParticipant.open({});
  t.teardown(() => p.close());
  const bms = await firstValueFrom(
    p
      .subscribe<{ soc: number; soh: number; current: number; cell_vol: Uint16Array; cycle: number; reserve: Uint32Array }>(
        'rt/lf/bmsstate',
        'unitree_hg/msg/BmsState_',
      )
      .pipe(timeout(15_000)),
  );
  t.equal(bms.soc, 64);
  t.equal(bms.soh, 98);
  t.equal(bms.current, -3100);
  t.equal(bms.cell_vol[39], 4012);
  t.equal(bms.cycle, 17);
  t.equal(bms.reserve[2], 777, 'the last field decodes too: the layout is byte-exact');

  const body = ddsBodyOf({
    robot: 'unitree_g1',
    binding: 'unitree_dds',
    domain_id: undefined,
    network_interface: undefined,
    lost_after_seconds: 1,
    cmd_vel_topic: '/cmd_vel',
    odom_topic: '/odom',
    battery_topic: '/battery_state',
    state_topic: 'rt/sportmodestate',
    lowstate_topic: 'rt/lowstate',
    bms_topic: 'rt/lf/bmsstate',
  });
  t.teardown(() => body.release());
  const state = await firstValueFrom(
    body.state$.pipe(
      filter((s) => s.battery_percent === 64),
      timeout(15_000),
    ),
  );
  t.equal(state.robot, 'unitree_g1', 'the G1 body reads its battery from rt/lf/bmsstate');
});

t.test('matched counts fall to 0 when the peer goes and rise when it returns', async (t) => {
  const p = DdsParticipant.open({});
  t.teardown(() => p.close());
  const odom = p.reader('rt/odom', 'nav_msgs/msg/Odometry');
  t.teardown(() => odom.close());
  const first = await startPeer('ros2_base', domain);
  await firstValueFrom(
    odom.matched$.pipe(
      filter((n) => n > 0),
      timeout(15_000),
    ),
  );
  await first.stop('SIGTERM');
  await firstValueFrom(
    odom.matched$.pipe(
      filter((n) => n === 0),
      timeout(15_000),
    ),
  );
  const second = await startPeer('ros2_base', domain);
  t.teardown(() => second.stop());
  t.ok(
    await firstValueFrom(
      odom.matched$.pipe(
        filter((n) => n > 0),
        timeout(15_000),
      ),
    ),
    'matched again',
  );
});

t.test('an unknown type fails at the call, naming it', async (t) => {
  const p = DdsParticipant.open({});
  t.teardown(() => p.close());
  t.throws(() => p.subscribe('rt/x', 'sensor_msgs/msg/LaserScann'), /unknown ROS 2 message type "sensor_msgs\/msg\/LaserScann"/);
});
