// Proves the robot bodies over DDS end to end: a running agent drives a ROS 2 base and a Go2 (real CycloneDDS peers on loopback) with the right signs, stops them, loses and finds them.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { LOOPBACK_URI, freshDomain, startPeer } from '../helpers/dds-peers.js';
import { requireBuild } from '../helpers/requires.js';

requireBuild();
const domain = freshDomain() + 3;
const env = { CYCLONEDDS_URI: LOOPBACK_URI, ROS_DOMAIN_ID: '' };

function agentConfig(wd: ReturnType<typeof workDir>, body: Record<string, unknown>, safety: Record<string, unknown> = {}): string {
  const file = wd.file('robot.json5');
  writeFileSync(
    file,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'ddsbot',
      default_mode: 'drive',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: 'openmind_free',
      system_governance: '',
      service: { base_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini' } },
      safety: { deadman_seconds: 30, estop_socket: { enabled: true, path: wd.file('estop.sock') }, ...safety },
      modes: {
        drive: {
          display_name: 'Drive',
          description: 'd',
          system_prompt_base: 'you drive',
          hertz: 5,
          agent_inputs: [
            { type: 'TextInput', config: { source: 'socket', path: wd.socket, descriptor: 'Voice' } },
            { type: 'BodyInput', config: { ...body, domain_id: domain, facets: ['battery', 'odometry'], poll_seconds: 1 } },
          ],
          agent_actions: [{ name: 'move', llm_label: 'move', connector: 'body', config: { ...body, domain_id: domain, step_m: 0.1, turn_deg: 10 } }],
        },
      },
    }),
  );
  return file;
}

t.test(
  'a ROS 2 base: turn left is +yaw, walk forward +vx, a zero Twist ends each; odometry and battery reach the prompt; shutdown sends a zero Twist',
  async (t) => {
    const base = await startPeer('ros2_base', domain);
    t.teardown(() => base.stop());
    const wd = workDir();
    const agent = startAgent(agentConfig(wd, { robot: 'turtlebot4', binding: 'ros2' }), wd.state, [], env);
    t.teardown(() => void agent.child.kill('SIGKILL'));
    await agent.waitFor((e) => e.type === 'stream' && e.kind === 'dds' && e.state === 'streaming', 30_000, 'the robot found');
    await typeLines(wd.socket, ['turn left']);
    const turn = await base.waitLine(/^cmd_vel /, 30_000);
    const [, vx, , wz] = turn.split(' ').map(Number);
    t.equal(vx, 0, 'turning does not drive');
    t.ok(wz! > 0.5 && wz! < 0.53, `turn left is a positive yaw rate of 30 deg/s (${wz})`);
    await base.waitLine(/^cmd_vel 0\.000 0\.000 0\.000$/, 15_000, base.lines.indexOf(turn));
    const from = base.lines.length;
    await typeLines(wd.socket, ['walk forward']);
    const walk = await base.waitLine(/^cmd_vel 0\.300 /, 30_000, from);
    t.match(walk, /^cmd_vel 0\.300 0\.000 0\.000$/, 'walk forward is +vx at the configured 0.3 m/s');
    const prompt = await agent.waitFor(
      (e) => e.type === 'prompt' && /battery 87%/.test(e.prompt) && /heading [1-9]/.test(e.prompt),
      30_000,
      'a prompt with the odometry and battery',
    );
    t.match((prompt as { prompt: string }).prompt, /turtlebot4 \(over DDS\): battery 87%; at x/);
    const before = base.lines.length;
    agent.child.kill('SIGTERM');
    t.equal(await agent.exited, 0, 'clean exit');
    await base.waitLine(/^cmd_vel 0\.000 0\.000 0\.000$/, 10_000, before);
    t.pass('a zero Twist reached the base at shutdown');
  },
);

t.test("the governor's velocity caps hold on the wire: a mode's max_linear_speed_mps and max_angular_speed_dps cap what the connector asks", async (t) => {
  const base = await startPeer('ros2_base', domain);
  t.teardown(() => base.stop());
  const wd = workDir();
  // The connector would drive at 0.3 m/s and turn at 30 deg/s; the safety block allows 0.1 m/s and 10 deg/s.
  const agent = startAgent(
    agentConfig(wd, { robot: 'turtlebot4', binding: 'ros2' }, { max_linear_speed_mps: 0.1, max_angular_speed_dps: 10 }),
    wd.state,
    [],
    env,
  );
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'stream' && e.kind === 'dds' && e.state === 'streaming', 30_000, 'the robot found');
  await typeLines(wd.socket, ['walk forward']);
  t.equal(await base.waitLine(/^cmd_vel 0\.[1-9]/, 30_000), 'cmd_vel 0.100 0.000 0.000', 'walk forward at the cap, 0.1 m/s');
  const from = base.lines.length;
  await typeLines(wd.socket, ['turn left']);
  const turn = await base.waitLine(/^cmd_vel 0\.000 0\.000 0\.[1-9]/, 30_000, from);
  t.equal(turn, 'cmd_vel 0.000 0.000 0.175', 'turn left at the cap, 10 deg/s (0.175 rad/s)');
  t.notOk(
    base.lines.some((l) => /^cmd_vel (0\.[2-9]|0\.1[1-9])/.test(l) || /0\.52\d$/.test(l)),
    'nothing faster than the caps ever reached the base',
  );
});

t.test('a Go2: walk forward is Move with +vx, the e-stop sends StopMove and refuses motion, the robot lost and back', async (t) => {
  let go2 = await startPeer('go2', domain);
  t.teardown(() => go2.stop());
  const wd = workDir();
  const agent = startAgent(agentConfig(wd, { robot: 'unitree_go2', binding: 'unitree_dds', lost_after_seconds: 0.5 }), wd.state, [], env);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'stream' && e.kind === 'dds' && e.state === 'streaming', 30_000, 'the robot found');
  await typeLines(wd.socket, ['walk forward']);
  t.match(await go2.waitLine(/^api 1008 /, 30_000), /^api 1008 \{"x":0\.3,"y":0,"z":0\}$/, 'Move with vx 0.3 m/s');
  await go2.waitLine(/^api 1003 /, 15_000);
  t.pass('StopMove ends the walk');

  // The e-stop: latched, a StopMove on the wire, motion refused.
  const before = go2.lines.length;
  const estop = spawnSync(process.execPath, [MAIN, 'estop', '--socket', wd.file('estop.sock'), '--reason', 'test'], {
    encoding: 'utf8',
    env: { ...process.env, CORTEX_STATE_DIR: wd.state },
  });
  t.equal(estop.status, 0, `cortexd estop: ${estop.stderr}`);
  await go2.waitLine(/^api 1003 /, 15_000, before);
  t.pass('StopMove on the wire after the e-stop');
  await typeLines(wd.socket, ['walk forward']);
  await agent.waitFor((e) => e.type === 'safety' && e.kind === 'refused' && e.cause === 'estop', 30_000, 'motion refused while latched');
  const release = spawnSync(process.execPath, [MAIN, 'estop', '--release', '--socket', wd.file('estop.sock')], {
    encoding: 'utf8',
    env: { ...process.env, CORTEX_STATE_DIR: wd.state },
  });
  t.equal(release.status, 0, `cortexd estop --release: ${release.stderr}`);

  // Unplugged: killed without a word. The robot is lost on the bus; motion is refused.
  await go2.stop('SIGKILL');
  const lost = await agent.waitFor(
    (e) => e.type === 'stream' && e.kind === 'dds' && /lost the robot/.test(String((e as { reason?: string }).reason ?? '')),
    15_000,
    'lost the robot',
  );
  t.match((lost as { reason: string }).reason, /no rt\/sportmodestate from unitree_go2/);
  const refusedAt = agent.events.length;
  await typeLines(wd.socket, ['walk forward']);
  await agent.waitFor(
    (e) => agent.events.indexOf(e) >= refusedAt && ((e.type === 'safety' && e.kind === 'refused') || (e.type === 'action' && e.state === 'failed')),
    30_000,
    'motion refused while the robot is gone',
  );
  // Back: found again by the same session, and it walks.
  go2 = await startPeer('go2', domain);
  await agent.waitFor(
    (e) => agent.events.indexOf(e) >= refusedAt && e.type === 'stream' && e.kind === 'dds' && e.state === 'streaming',
    30_000,
    'the robot found again',
  );
  await typeLines(wd.socket, ['walk forward']);
  t.match(await go2.waitLine(/^api 1008 /, 30_000), /"x":0\.3/, 'it walks again');
});
