// HIL: the ROS 2 lidar source against a real CycloneDDS peer on loopback (a base built with idlc + gcc that publishes sensor_msgs/LaserScan of a wall): scans decoded, an agent that insists on walking toward the wall stopped by the guard, the lidar lost and found.
import t, { type Test } from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, take, timeout, toArray } from 'rxjs';
import { Agent } from '../../actors/agent/agent.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import { AgentConfig, type LoadedConfig } from '../../src/config/schema.js';
import { LidarConfig } from '../../src/config/lidar.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { BodyBoard } from '../../src/cortex/bodies.js';
import { createLogger } from '../../src/log.js';
import { freePaths } from '../../src/lidar/paths.js';
import { DdsParticipant } from '../../devices/dds/participant.js';
import { createRos2Lidar, scanOfLaserScan } from '../../devices/lidar/ros2-lidar.js';
import { freshDomain, startPeer, useLoopback } from '../helpers/dds-peers.js';
import { until } from '../helpers/wait.js';
import { scriptedLlm } from '../helpers/plugins.js';

t.setTimeout(240_000);
const domain = freshDomain() + 7;
useLoopback(domain);
type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

t.test('a LaserScan becomes a Scan: angles from angle_min by the increment, out-of-range and infinite ranges are no return', async (t) => {
  const base = { header: { stamp: { sec: 0, nanosec: 0 }, frame_id: 'laser' }, angle_max: 0, range_min: 0.1, range_max: 5, intensities: [] };
  const s = scanOfLaserScan({ ...base, angle_min: -1, angle_increment: 0.5, ranges: [1, 0.05, 6, Number.POSITIVE_INFINITY, Number.NaN] }, 7);
  if (typeof s === 'string') throw new Error(s);
  t.same([...s.angles], [-1, -0.5, 0, 0.5, 1]);
  t.equal(s.ranges[0], 1);
  t.ok(
    [1, 2, 3, 4].every((i) => Number.isNaN(s.ranges[i])),
    'below range_min, above range_max, +Inf and NaN are no return',
  );
  t.equal(s.at, 7);
  t.match(scanOfLaserScan({ ...base, angle_min: 0, angle_increment: 0, ranges: [1] }, 0), /angle_increment 0/);
  t.match(scanOfLaserScan({ ...base, angle_min: 0, angle_increment: 0.1, ranges: [] }, 0), /no ranges/);
});

t.test('the source against a real DDS peer: no scan yet is a failed open that names the topic; then scans of the wall ahead', async (t) => {
  const config = LidarConfig.parse({ source: 'ros2', topic: '/scan', lost_after_ms: 600 });
  const lidar = createRos2Lidar(config as Extract<LidarConfig, { source: 'ros2' }>);
  // No peer: the open waits for a first scan; the session's connect timeout aborts it with the reason.
  const ac = new AbortController();
  const nothing = lidar.device.connect(ac.signal);
  setTimeout(() => ac.abort(), 300);
  await t.rejects(nothing, /no LaserScan on rt\/scan on DDS domain \d+/);

  const peer = await startPeer('ros2_base', domain, ['1.5']);
  t.teardown(() => peer.stop('SIGKILL'));
  const link = await lidar.device.connect(new AbortController().signal);
  const scans = await firstValueFrom(lidar.scans$.pipe(take(3), toArray(), timeout(15_000)));
  const s = scans.at(-1)!;
  t.equal(s.ranges.length, 360);
  // Beam 180 is angle 0: straight ahead, the wall 1.5 m away; straight back hits nothing within 8 m (+Inf: no return).
  t.ok(Math.abs(s.angles[180]!) < 1e-6, 'beam 180 looks ahead');
  t.ok(Math.abs(s.ranges[180]! - 1.5) < 0.01, `the wall ahead at ${s.ranges[180]} m`);
  t.ok(Number.isNaN(s.ranges[0]!), 'nothing behind: no return');
  // The ROS 2 angles are counter-clockwise from forward: with the sensor's zero forward (mounting 180) the free paths see the wall ahead.
  // The wall is dead ahead: the nearest return within the robot's width is it.
  t.equal(freePaths(s, { ...config, relevant_distance_max: 2 }).aheadM, 1.5, 'the nearest obstacle ahead is the wall');
  t.ok(freePaths(s, config).advance, "OM1's 1 m paths ahead are free with the wall 1.5 m away");
  t.equal(
    freePaths(s, { ...config, relevant_distance_max: 2, sensor_mounting_angle: 0 }).aheadM,
    null,
    'mounted backwards (zero to the rear) the wall is behind',
  );

  // The peer dies: the run ends with "lost the lidar" within lost_after_ms (plus a quarter).
  const ended = new Promise<string>((resolve) => link.subscribe((e) => resolve(e.type === 'close' ? e.reason : e.type)));
  await peer.stop('SIGKILL');
  t.match(await ended, /^lost the lidar: no LaserScan on rt\/scan for 0\.\d s on DDS domain \d+$/);
  link.close();
});

/** A model that walks forward whenever the typed line says "go", whatever the free paths say. */
const insistent = scriptedLlm('InsistentLLM', (user, _signal, { call, nothing }) =>
  user.split('\n').some((l) => /^\s*go\s*$/.test(l)) ? call('move', { action: 'walk forward' }) : nothing,
);

const STOP_M = 0.4;

async function runAgent(t: Test) {
  const config = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'ros2guard',
    default_mode: 'drive',
    allow_manual_switching: false,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    cortex_llm: { type: 'InsistentLLM', config: {} },
    lidar: { source: 'ros2', topic: '/scan', lost_after_ms: 800 },
    modes: {
      drive: {
        display_name: 'Drive',
        description: 'drives',
        system_prompt_base: '',
        hertz: 5,
        agent_inputs: [{ type: 'TextInput', config: { source: 'stdin' } }],
        agent_actions: [
          {
            name: 'move',
            llm_label: 'move',
            connector: 'body',
            config: { robot: 'turtlebot4', binding: 'ros2', step_m: 0.3, linear_speed_mps: 0.3, command_seconds: 1 },
          },
        ],
      },
    },
    safety: { estop_socket: { enabled: false }, deadman_seconds: 30, obstacle: { stop_distance_m: STOP_M, slow_distance_m: 0.8, max_scan_age_ms: 500 } },
  });
  const loaded = { file: 'x', configName: 'ros2guard', legacy: false, config, apiKey: '', addresses: {}, warnings: [] } as unknown as LoadedConfig;
  const agent = new Agent({
    loaded,
    plugins: await resolvePlugins(withPlugins(builtinPlugins, { llms: [insistent] }), config),
    logger: createLogger({ level: 'silent', pretty: false }),
    stateDir: mkdtempSync(join(tmpdir(), 'cortexd-ros2-lidar-')),
    memory: false,
    runtimeDir: false,
    shutdownBudgetMs: 2000,
    closeBudgetMs: 2000,
    bodies: new BodyBoard(),
  });
  const events: AgentEvent[] = [];
  agent.bus.events$.subscribe((e) => events.push(e));
  t.teardown(async () => {
    agent.stop('test over');
    await agent.done;
  });
  agent.start();
  return { agent, events };
}

t.test(
  'an agent on the ROS 2 base with its LaserScan: "walk forward" over and over stops with stop_distance left; the lidar lost is said and blinds the guard',
  async (t) => {
    const wallX = 1.3;
    let base = await startPeer('ros2_base', domain, [String(wallX)]);
    t.teardown(() => base.stop('SIGKILL'));
    const p = DdsParticipant.open({});
    t.teardown(() => p.close());
    let x = 0;
    const odom = p.subscribe<{ pose: { pose: { position: { x: number } } } }>('rt/odom', 'nav_msgs/msg/Odometry').subscribe((o) => {
      x = o.pose.pose.position.x;
    });
    t.teardown(() => odom.unsubscribe());

    const { agent, events } = await runAgent(t);
    await until('the lidar streaming', () => events.some((e) => e.type === 'stream' && e.kind === 'lidar' && e.state === 'streaming'), 60_000);
    const refusal = (e: AgentEvent) =>
      e.type === 'safety' && (e.kind === 'refused' || e.kind === 'stop') && e.cause === 'obstacle' && /m ahead$/.test(e.reason);
    let orders = 0;
    await until(
      () => `an obstacle refusal (after ${orders} orders; the base at x ${x.toFixed(3)})`,
      () => {
        if (events.some(refusal)) return true;
        agent.pushText('go');
        orders++;
        return false;
      },
      150_000,
      300,
    );
    // Whatever the model says now, the base does not come nearer.
    for (let i = 0; i < 10; i++) agent.pushText('go');
    await until(
      'the base settled',
      () => !events.some((e) => e.type === 'action' && e.label === 'move' && e.state === 'running' && e.at > Date.now() - 1500) || undefined,
      30_000,
      200,
    );
    const left = wallX - x;
    t.ok(left >= STOP_M, `${left.toFixed(3)} m left to the wall (stop_distance ${STOP_M} m)`);
    t.ok(x > 0.3, `the base did walk toward the wall first (x ${x.toFixed(3)})`);
    const said = events.find(refusal) as Ev<'safety'>;
    t.match(said.reason, /^obstacle 0\.\d+ m ahead$/);

    // The robot's lidar driver dies: the session says why, and the guard is blind until scans return.
    const killedAt = Date.now();
    await base.stop('SIGKILL');
    const lost = await until(
      'the lidar lost',
      () => events.find((e): e is Ev<'stream'> => e.type === 'stream' && e.kind === 'lidar' && e.at >= killedAt && /lost the lidar/.test(e.reason ?? '')),
      30_000,
    );
    t.match(lost.reason, /no LaserScan on rt\/scan/);
    base = await startPeer('ros2_base', domain, ['5']);
    await until('the lidar back', () => events.some((e) => e.type === 'stream' && e.kind === 'lidar' && e.at > lost.at && e.state === 'streaming'), 60_000);
    t.pass('scans came back and the session streams again');
  },
);
