// Proves what a ROS 2 topic entry turns into before any wire: messages as prompt text (compact, constants by name, bounded, templates), the model's arguments from the config, and clear refusals.
import t from 'tap';
import { codecOf } from '../../devices/dds/types.js';
import { messageText, shortNumber } from '../../devices/dds/message-text.js';
import { checkArgField, checkFixedField } from '../../devices/dds/message-fields.js';
import { Ros2TopicConnectorOptions, Ros2TopicInputSchema, ros2PublishArgs } from '../../src/plugins/schemas/ros2.js';
import { parametersOf, toolForAction } from '../../src/cortex/tools.js';
import { ros2PublishAction } from '../../src/plugins/ros2.js';
import { argsFor } from '../../src/plugins/args.js';
import type { ActionConfig } from '../../src/config/schema.js';

/** A BatteryState as a driver publishes it, through the CDR codec (so the rendering sees decoded values, typed arrays and all). */
function battery(): Record<string, unknown> {
  const c = codecOf('sensor_msgs/msg/BatteryState');
  return c.decode(
    c.encode({
      header: { stamp: { sec: 1700000000, nanosec: 5 }, frame_id: 'battery' },
      voltage: 16.2,
      percentage: 0.87,
      current: Number.NaN,
      power_supply_status: 2,
      present: true,
      cell_voltage: [4.05, 4.04, 4.06, 4.05],
      location: 'base',
    }),
  );
}

t.test('a message without a template: every field compactly, constants by name, no stamp, no empty values', async (t) => {
  const render = messageText(codecOf('sensor_msgs/msg/BatteryState'), { topic: '/battery_state', maxChars: 400 });
  const text = render(battery());
  t.match(text, /^header\.frame_id: "battery", voltage: 16\.2, temperature: 0, current: NaN, /);
  t.match(text, /percentage: 0\.87, power_supply_status: DISCHARGING, power_supply_health: UNKNOWN, /, 'uint8 enums read as their constants');
  t.match(text, /present: true, cell_voltage: \[4\.05, 4\.04, 4\.06, 4\.05\], location: "base"$/);
  t.notMatch(text, /stamp|serial_number|cell_temperature/, 'the stamp and empty values are left out');
});

t.test('chosen fields, a template of field paths, and the bound', async (t) => {
  const codec = codecOf('sensor_msgs/msg/BatteryState');
  t.equal(
    messageText(codec, { topic: '/b', fields: ['percentage', 'header.stamp'], maxChars: 400 })(battery()),
    'percentage: 0.87, header.stamp: 1700000000 s',
  );
  t.equal(
    messageText(codec, { topic: '/battery_state', template: '{topic}: {percentage} full, {power_supply_status}, at {location}', maxChars: 400 })(battery()),
    '/battery_state: 0.87 full, DISCHARGING, at base',
  );
  const long = messageText(codecOf('std_msgs/msg/String'), { topic: '/t', maxChars: 40 })({ data: 'x'.repeat(500) });
  t.equal(long.length, 40);
  t.match(long, /…\[cut\]$/);
  const scan = messageText(codecOf('sensor_msgs/msg/LaserScan'), { topic: '/scan', fields: ['ranges'], maxChars: 400 })({
    ranges: new Float32Array(360).fill(1.5),
  });
  t.equal(scan, 'ranges: [1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, 1.5, … (360 items)]', 'a long array is shortened');
  const image = messageText(codecOf('sensor_msgs/msg/Image'), { topic: '/image', fields: ['data'], maxChars: 400 })({ data: new Uint8Array(921600) });
  t.equal(image, 'data: <921600 bytes>');
  t.equal(shortNumber(0.123456), '0.1235');
  t.equal(shortNumber(12345.678), '12346');
});

t.test('a field the type lacks is an error when the input is made, naming the type, the path and the fields there', async (t) => {
  const codec = codecOf('sensor_msgs/msg/BatteryState');
  t.throws(() => messageText(codec, { topic: '/b', template: 'at {percent}', maxChars: 100 }), {
    message: /template \{percent\}: sensor_msgs\/msg\/BatteryState has no field "percent" \(its fields: header, voltage, .*percentage/,
  });
  t.throws(() => messageText(codec, { topic: '/b', fields: ['header.frame'], maxChars: 100 }), {
    message: /has no field "header.frame" \(header is a std_msgs\/Header; its fields: stamp, frame_id\)/,
  });
  t.throws(() => messageText(codec, { topic: '/b', fields: ['location.x'], maxChars: 100 }), {
    message: /"location" is a string, so "location.x" names nothing/,
  });
});

t.test("the input's block: a type name and a topic name are checked at check time", async (t) => {
  t.ok(Ros2TopicInputSchema.safeParse({ topic: '/battery_state', message_type: 'sensor_msgs/msg/BatteryState' }).success);
  const bad = Ros2TopicInputSchema.safeParse({ topic: 'battery state', message_type: 'BatteryState' });
  t.notOk(bad.success);
  const paths = bad.error!.issues.map((i) => i.path.join('.'));
  t.same(paths.sort(), ['message_type', 'topic']);
});

const led = {
  topic: '/led',
  message_type: 'std_msgs/msg/ColorRGBA',
  description: "set the colour of the robot's LED ring",
  args: {
    red: { field: 'r', type: 'number', min: 0, max: 1, description: 'red, 0 to 1' },
    green: { field: 'g', type: 'number', min: 0, max: 1 },
    blue: { field: 'b', type: 'number', min: 0, max: 1 },
    mode: { field: 'a', type: 'number', values: [0, 1], optional: true },
  },
  fixed: {},
};

t.test("the model's arguments come from the entry: JSON Schema for the tool, zod for the values", async (t) => {
  const entry = { name: 'ros2_publish', llm_label: 'set_led', connector: 'ros2_topic', config: led } as unknown as ActionConfig;
  const tool = toolForAction(entry, ros2PublishAction);
  t.equal(tool.function.name, 'set_led');
  t.match(tool.function.description, /^set the colour of the robot's LED ring \(publish a message on a ROS 2 topic\) \(action ros2_publish, "set_led"\)/);
  t.match(tool.function.parameters, {
    type: 'object',
    properties: { red: { type: 'number', minimum: 0, maximum: 1, description: 'red, 0 to 1' }, mode: { enum: [0, 1] } },
    required: ['red', 'green', 'blue'],
    additionalProperties: false,
  });
  const args = argsFor(ros2PublishAction, entry.config);
  t.equal(argsFor(ros2PublishAction, entry.config), args, 'made once per entry block');
  t.equal(parametersOf(args), tool.function.parameters);
  t.ok(args.safeParse({ red: 1, green: 0.5, blue: 0 }).success);
  t.notOk(args.safeParse({ red: 2, green: 0, blue: 0 }).success, 'out of range');
  t.notOk(args.safeParse({ red: 1, green: 0, blue: 0, extra: 1 }).success, 'only the declared arguments');
  t.notOk(args.safeParse({ red: 1, green: 0, blue: 0, mode: 0.5 }).success, 'only the listed values');
  t.ok(ros2PublishArgs({ topic: 1 }).safeParse({}).success, 'a refused block takes an empty object (check reports the block)');
  t.notOk(ros2PublishArgs({ topic: 1 }).safeParse({ x: 1 }).success, 'and nothing else');
});

t.test('the action refuses motion types (the governor gates motion) and clashing fields, at check time', async (t) => {
  const twist = Ros2TopicConnectorOptions.safeParse({ topic: '/cmd_vel', message_type: 'geometry_msgs/msg/Twist' });
  t.notOk(twist.success);
  t.match(twist.error!.issues[0], { path: ['message_type'], message: /moves the robot.*safety governor.*move action/ });
  const clash = Ros2TopicConnectorOptions.safeParse({
    ...led,
    args: { a: { field: 'r', type: 'number' }, b: { field: 'r', type: 'number' } },
    fixed: { g: 1 },
  });
  t.notOk(clash.success);
  t.match(clash.error!.issues[0]!.message, /arguments a and b both set r/);
  const badArg = Ros2TopicConnectorOptions.safeParse({ ...led, args: { n: { type: 'boolean', min: 1 } } });
  t.match(badArg.error!.issues[0], { path: ['args', 'n', 'min'], message: /min and max bound numbers; this argument is a boolean/ });
});

t.test('arguments and fixed values are checked against the type when the connector is made', async (t) => {
  const rgba = codecOf('std_msgs/msg/ColorRGBA');
  t.same(checkArgField(rgba, 'red', 'r', { type: 'number' }).path, ['r']);
  t.throws(() => checkArgField(rgba, 'red', 'red', { type: 'number' }), { message: /std_msgs\/msg\/ColorRGBA has no field "red" \(its fields: r, g, b, a\)/ });
  t.throws(() => checkArgField(rgba, 'red', 'r', { type: 'string' }), {
    message: /argument red \(field r of std_msgs\/msg\/ColorRGBA, a float32\): declared string, declare it number/,
  });
  const u8 = codecOf('std_msgs/msg/UInt8');
  t.throws(() => checkArgField(u8, 'level', 'data', { type: 'number' }), { message: /a uint8\): declared number, declare it integer/ });
  t.throws(() => checkArgField(u8, 'level', 'data', { type: 'integer', max: 300 }), { message: /300 does not fit a uint8 \(0\.\.255\)/ });
  const odom = codecOf('nav_msgs/msg/Odometry');
  t.throws(() => checkArgField(odom, 'pose', 'pose.pose', { type: 'number' }), { message: /only single primitive fields take an argument/ });
  t.doesNotThrow(() => checkFixedField(odom, 'header.frame_id', 'odom'));
  t.throws(() => checkFixedField(odom, 'header.frame_id', 3), {
    message: /fixed "header.frame_id" \(a string of nav_msgs\/msg\/Odometry\): 3 is not a string/,
  });
  t.throws(() => checkFixedField(u8, 'data', 256), { message: /256 is not a uint8/ });
});
