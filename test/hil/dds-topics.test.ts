// Proves any ROS 2 topic as an input and as an action against real CycloneDDS peers on loopback (idlc + gcc): prompt lines from std_msgs/String and sensor_msgs/BatteryState, messages out, refusals.
import t from 'tap';
import pino from 'pino';
import { filter, firstValueFrom, map, timeout } from 'rxjs';
import { createRos2TopicInput } from '../../actors/inputs/ros2-topic-input.js';
import { createRos2TopicConnector } from '../../actors/actions/connectors/ros2-topic.js';
import type { ActionContext } from '../../src/cortex/action.js';
import type { DdsSample, InputContext } from '../../src/cortex/input.js';
import { freshDomain, startPeer, useLoopback } from '../helpers/dds-peers.js';

const domain = freshDomain() + 5;
useLoopback(domain);
const logger = pino({ level: 'silent' });

function inputCtx(extra: Partial<InputContext> = {}): InputContext {
  return { logger, stateDir: '/nonexistent', signal: new AbortController().signal, ...extra };
}
function actionCtx(extra: Partial<ActionContext> = {}): ActionContext {
  return { logger, stateDir: '/nonexistent', write: () => undefined, ...extra };
}

t.test('std_msgs/String through a template reaches the prompt; before a publisher the prompt says it once', async (t) => {
  const input = createRos2TopicInput(
    { topic: '/chatter', message_type: 'std_msgs/msg/String', template: 'the node says {data}', descriptor: 'Chatter', min_interval_seconds: 0 },
    inputCtx(),
  );
  t.teardown(() => input.stop());
  const lines = input.listen().pipe(map((raw) => input.rawToText(raw)?.text));
  const subscribed = lines.subscribe();
  t.teardown(() => subscribed.unsubscribe());
  t.equal(input.formattedLatestBuffer(), `Chatter: not available (no publisher of /chatter (std_msgs/msg/String) on DDS domain ${domain} yet)`);
  t.equal(input.formattedLatestBuffer(), undefined, 'said once');
  const node = await startPeer('ros2_node', domain);
  t.teardown(() => node.stop());
  const line = await firstValueFrom(lines.pipe(filter(Boolean), timeout(20_000)));
  t.match(line, /^the node says hello \d+$/);
  t.match(input.formattedLatestBuffer(), /^Chatter: the node says hello \d+$/, 'the newest message only (policy latest)');
});

t.test('sensor_msgs/BatteryState from a ROS 2 base, rendered compactly, at most one per interval', async (t) => {
  const base = await startPeer('ros2_base', domain);
  t.teardown(() => base.stop());
  const input = createRos2TopicInput(
    { topic: '/battery_state', message_type: 'sensor_msgs/msg/BatteryState', max_chars: 300, min_interval_seconds: 2 },
    inputCtx(),
  );
  t.teardown(() => input.stop());
  const texts: Array<{ text: string; at: number }> = [];
  const sub = input.listen().subscribe((raw) => {
    const m = input.rawToText(raw);
    if (m) texts.push({ text: m.text, at: Date.now() });
  });
  t.teardown(() => sub.unsubscribe());
  const first = await firstValueFrom(input.listen().pipe(timeout(20_000)));
  const text = input.rawToText(first)!.text;
  t.match(text, /^header\.frame_id: "battery", voltage: 16\.2, .*percentage: 0\.87, power_supply_status: DISCHARGING, .*present: true, location: "base"/);
  // The base publishes at 2 Hz; with a 2 s interval at most two lines come in 3 s (the first at once, then one per interval).
  await new Promise((resolve) => setTimeout(resolve, 3000));
  t.ok(texts.length >= 1 && texts.length <= 3, `${texts.length} lines in 3 s at 2 Hz with a 2 s interval`);
  t.match(input.formattedLatestBuffer(), /^\/battery_state: header\.frame_id/, 'the topic is the default label');
});

t.test('an unknown type or a field the type lacks fails when the input is made, naming it', async (t) => {
  t.throws(() => createRos2TopicInput({ topic: '/b', message_type: 'sensor_msgs/msg/BateryState' }, inputCtx()), {
    message: /unknown ROS 2 message type "sensor_msgs\/msg\/BateryState"/,
  });
  t.throws(() => createRos2TopicInput({ topic: '/b', message_type: 'sensor_msgs/msg/BatteryState', template: '{charge_level}' }, inputCtx()), {
    message: /template \{charge_level\}: sensor_msgs\/msg\/BatteryState has no field "charge_level"/,
  });
});

const ledConfig = {
  topic: '/led',
  message_type: 'std_msgs/msg/ColorRGBA',
  args: {
    red: { field: 'r', type: 'number', min: 0, max: 1 },
    green: { field: 'g', type: 'number', min: 0, max: 1 },
    blue: { field: 'b', type: 'number', min: 0, max: 1 },
  },
  fixed: { a: 1 },
};

t.test('ros2_publish: the arguments fill a ColorRGBA and a String on the wire; the recording hears what went out', async (t) => {
  const node = await startPeer('ros2_node', domain);
  t.teardown(() => node.stop());
  const samples: DdsSample[] = [];
  const media = { frame: () => undefined, audio: () => undefined, dds: (s: DdsSample) => void samples.push(s) };
  const led = createRos2TopicConnector(ledConfig, actionCtx({ media }));
  t.teardown(() => led.stop());
  await led.run({ red: 1, green: 0.5, blue: 0 }, new AbortController().signal);
  t.equal(await node.waitLine(/^led /, 15_000), 'led 1.00 0.50 0.00 1.00', 'the arguments and the fixed alpha');
  const say = createRos2TopicConnector(
    { topic: 'rt/say', message_type: 'std_msgs/String', args: { text: { field: 'data', type: 'string', max_length: 80 } } },
    actionCtx(),
  );
  t.teardown(() => say.stop());
  await say.run({ text: 'hello from cortexd' }, new AbortController().signal);
  t.equal(await node.waitLine(/^say /, 15_000), 'say hello from cortexd');
  const out = samples.find((s) => s.topic === 'rt/led' && s.direction === 'out');
  t.ok(out, 'the ColorRGBA sent is handed to the recording');
  t.equal(out?.rosType, 'std_msgs/msg/ColorRGBA');
  t.equal(out?.schemaText, 'float32 r\nfloat32 g\nfloat32 b\nfloat32 a\n');
});

t.test('ros2_publish fails clearly: no subscriber, a bad argument declaration, a value the field cannot hold', async (t) => {
  const nobody = createRos2TopicConnector({ ...ledConfig, topic: '/nobody_listens' }, actionCtx());
  t.teardown(() => nobody.stop());
  await t.rejects(nobody.run({ red: 0, green: 0, blue: 0 }, new AbortController().signal), {
    message: new RegExp(`no subscriber of /nobody_listens \\(std_msgs/msg/ColorRGBA\\) on DDS domain ${domain} within 3 s; nothing was published`),
  });
  t.throws(() => createRos2TopicConnector({ ...ledConfig, args: { red: { field: 'red', type: 'number' } } }, actionCtx()), {
    message: /std_msgs\/msg\/ColorRGBA has no field "red" \(its fields: r, g, b, a\)/,
  });
  t.throws(() => createRos2TopicConnector({ ...ledConfig, fixed: { a: 'opaque' } }, actionCtx()), {
    message: /fixed "a" \(a float32 of std_msgs\/msg\/ColorRGBA\): "opaque" is not a float32/,
  });
  t.throws(() => createRos2TopicConnector({ topic: '/cmd_vel', message_type: 'geometry_msgs/msg/Twist' }, actionCtx()), { message: /moves the robot/ });
});
