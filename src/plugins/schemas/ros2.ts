// The config blocks of a ROS 2 topic as an input (Ros2TopicInput) and as an action (ros2_publish), with the arguments an entry declares: data only.
import { z } from 'zod';
import { CommonInputFields } from './inputs.js';

/** `pkg/msg/Name` or `pkg/Name` (ROS 2 writes the first); the type itself is looked up when the entry starts. */
const ROS_TYPE = /^[A-Za-z][A-Za-z0-9_]*\/(msg\/)?[A-Za-z][A-Za-z0-9_]*$/;
/** A ROS name (`/battery_state`, `robot1/led`) or a DDS name (`rt/battery_state`). */
const TOPIC = /^\/?[A-Za-z~_][A-Za-z0-9_/]*$/;
/** A field of a message, dotted for nested ones: `data`, `pose.pose.position.x`. */
const FIELD_PATH = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*$/;
/** An argument name the model sees (a JSON Schema property name chat APIs accept). */
const ARG_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * Message types that move a robot's body. Publishing them from a model action would go around the
 * safety governor (limits, dead-man, e-stop), so the `ros2_topic` connector refuses them: motion goes
 * through the `move` action and a body binding (`ros2`, `unitree_dds`), which the governor gates.
 */
export const MOTION_TYPES: ReadonlySet<string> = new Set([
  'geometry_msgs/Twist',
  'geometry_msgs/TwistStamped',
  'geometry_msgs/Accel',
  'geometry_msgs/AccelStamped',
  'unitree_api/Request_',
  'unitree_go/LowCmd_',
  'unitree_hg/LowCmd_',
  'trajectory_msgs/JointTrajectory',
  'trajectory_msgs/MultiDOFJointTrajectory',
]);

/** `geometry_msgs/msg/Twist` -> `geometry_msgs/Twist` (the names MOTION_TYPES uses). */
export function shortRosType(type: string): string {
  const parts = type.trim().split('/');
  return parts.length === 3 && parts[1] === 'msg' ? `${parts[0]}/${parts[2]}` : type.trim();
}

const rosType = z
  .string()
  .regex(ROS_TYPE, 'a ROS 2 message type is written package/msg/Name, e.g. sensor_msgs/msg/BatteryState')
  .describe("the ROS 2 message type, e.g. std_msgs/msg/String, sensor_msgs/msg/BatteryState (any type of ROS 2 Jazzy's common interfaces, or Unitree's)");

const topic = z
  .string()
  .regex(TOPIC, 'a ROS topic name such as /battery_state (letters, digits, _ and /), or a DDS name such as rt/battery_state')
  .describe('the topic: a ROS name (/battery_state, carried as the DDS topic rt/battery_state) or a DDS name (rt/...)');

/** Where the DDS participant lives (as the ros2 and unitree_dds bodies have it). */
const DdsFields = {
  /** The DDS domain id; absent: ROS_DOMAIN_ID from the environment, else 0. */
  domain_id: z.number().int().min(0).max(232).optional(),
  /** The network interface of the robot's bus (CYCLONEDDS_URI, when set, wins). */
  network_interface: z.string().min(1).optional(),
};

export const Ros2TopicInputSchema = z.looseObject({
  ...CommonInputFields,
  ...DdsFields,
  topic,
  message_type: rosType,
  /**
   * How a message becomes prompt text: `{field}` and `{a.b.c}` (a field, arrays shortened), `{topic}`,
   * `{message}` (the whole message rendered). Absent: `{message}`, which shows every field (or the
   * `fields` chosen) compactly, constants by name (`power_supply_status DISCHARGING`).
   */
  template: z.string().min(1).max(2000).optional(),
  /** The fields the rendering shows (dotted paths), in this order; absent: all but header stamps. */
  fields: z.array(z.string().regex(FIELD_PATH, 'a field path such as percentage or pose.pose.position.x')).min(1).max(64).optional(),
  /** Longest text of one message in the prompt, in characters; longer is cut (and marked). */
  max_chars: z.number().int().min(20).max(8000).default(400),
  /** At most one message per this many seconds reaches the prompt (the newest wins); 0: every message. */
  min_interval_seconds: z.number().min(0).max(3600).default(1),
  /** Reliable reader (matches only reliable writers); default best effort, which matches every writer. */
  reliable: z.boolean().default(false),
});
export type Ros2TopicInputConfig = z.output<typeof Ros2TopicInputSchema>;

/** One argument of the model's tool call, and the message field it fills. */
export const Ros2ArgSpec = z
  .strictObject({
    /** The field it sets (dotted for nested ones); default: the argument's name. */
    field: z.string().regex(FIELD_PATH, 'a field path such as data or color.r').optional(),
    /** What the model sends: a string, a number, an integer, a boolean, or one of `values`. */
    type: z.enum(['string', 'number', 'integer', 'boolean']),
    /** What it means, for the model. */
    description: z.string().min(1).max(500).optional(),
    /** Numbers and integers: the range the model may ask for (integers are also bounded by the field's type). */
    min: z.number().optional(),
    max: z.number().optional(),
    /** Strings: the longest the model may send (default 1000). */
    max_length: z.number().int().positive().max(65_536).optional(),
    /** The only values allowed (strings or numbers, as `type` says). */
    values: z
      .array(z.union([z.string(), z.number()]))
      .min(1)
      .max(100)
      .optional(),
    /** The model may leave it out (the field then keeps `fixed`'s value or the type's default). */
    optional: z.boolean().default(false),
  })
  .superRefine((a, ctx) => {
    if ((a.min !== undefined || a.max !== undefined) && a.type !== 'number' && a.type !== 'integer')
      ctx.addIssue({ code: 'custom', path: ['min'], message: `min and max bound numbers; this argument is a ${a.type}` });
    if (a.min !== undefined && a.max !== undefined && a.min > a.max)
      ctx.addIssue({ code: 'custom', path: ['max'], message: `max ${a.max} is below min ${a.min}` });
    if (a.max_length !== undefined && a.type !== 'string')
      ctx.addIssue({ code: 'custom', path: ['max_length'], message: `max_length bounds strings; this argument is a ${a.type}` });
    if (a.values) {
      if (a.type === 'boolean') ctx.addIssue({ code: 'custom', path: ['values'], message: 'a boolean takes no list of values' });
      const want = a.type === 'string' ? 'string' : 'number';
      a.values.forEach((v, i) => {
        if (typeof v !== want) ctx.addIssue({ code: 'custom', path: ['values', i], message: `${JSON.stringify(v)} is not a ${a.type}` });
        else if (a.type === 'integer' && !Number.isInteger(v)) ctx.addIssue({ code: 'custom', path: ['values', i], message: `${v} is not an integer` });
      });
    }
  });
export type Ros2ArgSpec = z.output<typeof Ros2ArgSpec>;

export const Ros2TopicConnectorOptions = z
  .looseObject({
    ...DdsFields,
    topic,
    message_type: rosType,
    /** The tool's arguments by name: each fills one field of the message, validated before it is sent. */
    args: z
      .record(z.string().regex(ARG_NAME, 'an argument name: a letter, then letters, digits or _ (at most 64)'), Ros2ArgSpec)
      .refine((a) => Object.keys(a).length <= 32, 'at most 32 arguments')
      .default({}),
    /** Fields every message carries whatever the model says (dotted paths to values), e.g. `{"header.frame_id": "base_link"}`. */
    fixed: z.record(z.string().regex(FIELD_PATH, 'a field path such as header.frame_id'), z.unknown()).default({}),
    /** What the tool does, for the model (added to the action's description). */
    description: z.string().min(1).max(500).optional(),
    /** Reliable writer (default: reliable, keep last 1, as ROS 2's default publisher). */
    reliable: z.boolean().default(true),
  })
  .superRefine((o, ctx) => {
    if (MOTION_TYPES.has(shortRosType(o.message_type)))
      ctx.addIssue({
        code: 'custom',
        path: ['message_type'],
        message: `${o.message_type} moves the robot, and a model action publishing it would go around the safety governor; drive the robot with the move action and a body binding (ros2, unitree_dds), which the governor gates`,
      });
    const fields = new Map<string, string>();
    for (const [name, spec] of Object.entries(o.args)) {
      const field = spec.field ?? name;
      const other = fields.get(field);
      if (other) ctx.addIssue({ code: 'custom', path: ['args', name, 'field'], message: `arguments ${other} and ${name} both set ${field}` });
      fields.set(field, name);
      if (field in o.fixed) ctx.addIssue({ code: 'custom', path: ['args', name], message: `${field} is also in fixed; set it in one place` });
    }
  });
export type Ros2TopicConnectorOptions = z.output<typeof Ros2TopicConnectorOptions>;

/** One argument's zod schema, as the model's tool shows it. */
function argSchema(spec: Ros2ArgSpec): z.ZodType {
  let s: z.ZodType;
  if (spec.values && spec.type === 'string') s = z.enum(spec.values as [string, ...string[]]);
  else if (spec.values) s = z.literal(spec.values as number[]);
  else if (spec.type === 'string') s = z.string().max(spec.max_length ?? 1000);
  else if (spec.type === 'boolean') s = z.boolean();
  else {
    let n = spec.type === 'integer' ? z.number().int() : z.number();
    if (spec.min !== undefined) n = n.min(spec.min);
    if (spec.max !== undefined) n = n.max(spec.max);
    s = n;
  }
  if (spec.description) s = s.describe(spec.description);
  return spec.optional ? s.optional() : s;
}

/**
 * The arguments of a `ros2_publish` entry: one property per configured argument, nothing else. A block
 * the schema refuses gets an object that takes nothing (check reports the block itself).
 */
export function ros2PublishArgs(config: unknown): z.ZodType {
  const parsed = Ros2TopicConnectorOptions.safeParse(config ?? {});
  if (!parsed.success) return z.strictObject({});
  return z.strictObject(Object.fromEntries(Object.entries(parsed.data.args).map(([name, spec]) => [name, argSchema(spec)])));
}
