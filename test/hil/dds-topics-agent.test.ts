// Proves config/ros2_topics.json5 end to end against real CycloneDDS peers: topics reach the prompt, tool calls publish validated messages, and --record holds the DDS samples as ros2msg/cdr that Foxglove's libraries decode; replay still runs.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { McapIndexedReader } from '@mcap/core';
import { parse } from '@foxglove/rosmsg';
import { MessageReader } from '@foxglove/rosmsg2-serialization';
import { MAIN, startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { LOOPBACK_URI, freshDomain, startPeer } from '../helpers/dds-peers.js';
import { requireBuild } from '../helpers/requires.js';
import { decompressHandlers } from '../../src/record/compression.js';

requireBuild();
const domain = freshDomain() + 9;
const env = { CYCLONEDDS_URI: LOOPBACK_URI, ROS_DOMAIN_ID: String(domain) };
const SHIPPED = join(import.meta.dirname, '..', '..', 'config', 'ros2_topics.json5');

/** The shipped configuration, with typed text on a socket instead of stdin and a ROS 2 base's body added (its odometry and cmd_vel recorded too). */
function config(wd: ReturnType<typeof workDir>): string {
  const c = JSON5.parse(readFileSync(SHIPPED, 'utf8')) as { modes: { listen: { agent_inputs: Array<{ type: string; config: Record<string, unknown> }> } } };
  const inputs = c.modes.listen.agent_inputs;
  inputs[0] = { type: 'TextInput', config: { source: 'socket', path: wd.socket, descriptor: 'Voice' } };
  inputs.push({ type: 'BodyInput', config: { robot: 'turtlebot4', binding: 'ros2', facets: ['odometry'], poll_seconds: 1 } });
  const file = wd.file('ros2_topics.json5');
  writeFileSync(file, JSON.stringify(c));
  return file;
}

interface Recorded {
  topic: string;
  schemaName: string;
  schemaEncoding: string;
  messageEncoding: string;
  decoded: Record<string, unknown>;
}

/** Every message of the channels with message encoding cdr, decoded from the recorded ros2msg schema with Foxglove's libraries (as Foxglove does). */
async function readDds(file: string): Promise<Recorded[]> {
  const bytes = readFileSync(file);
  const reader = await McapIndexedReader.Initialize({
    readable: { size: async () => BigInt(bytes.length), read: async (offset, length) => bytes.subarray(Number(offset), Number(offset + length)) },
    decompressHandlers,
  });
  const out: Recorded[] = [];
  const readers = new Map<number, MessageReader>();
  for await (const m of reader.readMessages()) {
    const channel = reader.channelsById.get(m.channelId)!;
    if (channel.messageEncoding !== 'cdr') continue;
    const schema = reader.schemasById.get(channel.schemaId)!;
    let r = readers.get(schema.id);
    if (!r) readers.set(schema.id, (r = new MessageReader(parse(new TextDecoder().decode(schema.data), { ros2: true }))));
    out.push({
      topic: channel.topic,
      schemaName: schema.name,
      schemaEncoding: schema.encoding,
      messageEncoding: channel.messageEncoding,
      decoded: r.readMessage(m.data) as Record<string, unknown>,
    });
  }
  return out;
}

t.test('ROS 2 topics in and out through a running agent, recorded as Foxglove reads them, replayed', async (t) => {
  const node = await startPeer('ros2_node', domain);
  t.teardown(() => node.stop());
  const base = await startPeer('ros2_base', domain);
  t.teardown(() => base.stop());
  const wd = workDir();
  const recording = wd.file('run.mcap');
  const agent = startAgent(config(wd), wd.state, ['--record', recording], env);
  t.teardown(() => void agent.child.kill('SIGKILL'));

  const prompt = await agent.waitFor(
    (e) => e.type === 'prompt' && /INPUT: Chatter\n\/\/ START\nanother node says: hello \d+/.test(e.prompt) && /percentage: 0\.87/.test(e.prompt),
    60_000,
    'a prompt with the chatter and the battery',
  );
  t.match((prompt as { prompt: string }).prompt, /INPUT: Battery\n\/\/ START\npercentage: 0\.87, voltage: 16\.2, power_supply_status: DISCHARGING\n/);
  t.match(
    (prompt as { prompt: string }).prompt,
    /- set_led: set the colour of the robot's LED \(publish a message on a ROS 2 topic\)/,
    'the entry says what its action does',
  );

  await typeLines(wd.socket, ['call set_led with red=1 green=0.5 blue=0']);
  t.equal(await node.waitLine(/^led /, 30_000), 'led 1.00 0.50 0.00 1.00', 'the tool call reached the LED node');
  const ledsBefore = node.lines.filter((l) => l.startsWith('led ')).length;
  await typeLines(wd.socket, ['call set_led with red=7 green=0 blue=0']);
  const failed = await agent.waitFor((e) => e.type === 'action' && e.label === 'set_led' && e.state === 'failed', 30_000, 'an out-of-range colour refused');
  t.match((failed as { error: string }).error, /invalid value for set_led: red: .*(<=|1)/);
  await typeLines(wd.socket, ['call show_text with text="hi there"']);
  t.equal(await node.waitLine(/^say /, 30_000), 'say hi there');
  t.equal(node.lines.filter((l) => l.startsWith('led ')).length, ledsBefore, 'the refused colour never reached the wire');

  // Two more ticks after the last action: the recording holds what follows it, so a replay reaches it too.
  const done = await agent.waitFor((e) => e.type === 'action' && e.label === 'show_text' && e.state === 'done', 30_000, 'show_text done');
  const after = (n: number) => (e: { type: string; at: number }) => e.type === 'tick' && e.at > done.at && (n -= 1) === 0;
  await agent.waitFor(after(3), 30_000, 'three ticks after show_text');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'clean exit');

  const dds = await readDds(recording);
  const led = dds.find((m) => m.topic === '/led');
  t.match(led, { schemaName: 'std_msgs/msg/ColorRGBA', schemaEncoding: 'ros2msg', messageEncoding: 'cdr', decoded: { r: 1, g: 0.5, b: 0, a: 1 } });
  t.match(
    dds.find((m) => m.topic === '/say'),
    { decoded: { data: 'hi there' } },
  );
  t.match(
    dds.find((m) => m.topic === '/chatter'),
    { schemaName: 'std_msgs/msg/String', decoded: { data: /^hello \d+$/ } },
  );
  const battery = dds.find((m) => m.topic === '/battery_state');
  t.equal(Math.round((battery?.decoded.percentage as number) * 100), 87, 'BatteryState decodes from its recorded schema');
  const odom = dds.find((m) => m.topic === '/odom');
  t.match(odom, { schemaName: 'nav_msgs/msg/Odometry', decoded: { header: { frame_id: 'odom' }, child_frame_id: 'base_link' } });

  const summary = spawnSync(process.execPath, [MAIN, 'replay', recording, '--summary'], {
    encoding: 'utf8',
    env: { ...process.env, CORTEX_STATE_DIR: wd.state },
  });
  t.equal(summary.status, 0, summary.stderr);
  t.match(summary.stdout, /\/led\s+\d+ messages .*std_msgs\/msg\/ColorRGBA/);
  const replay = spawnSync(process.execPath, [MAIN, 'replay', recording], {
    encoding: 'utf8',
    env: { ...process.env, CORTEX_STATE_DIR: wd.state, ...env },
    timeout: 120_000,
  });
  t.match(replay.stdout, /replayed .* recorded decisions/, `replay ran: ${replay.stdout}${replay.stderr}`);
  t.match(replay.stdout, /same decisions/, `the replay makes the recorded decisions: ${replay.stdout}`);
});
