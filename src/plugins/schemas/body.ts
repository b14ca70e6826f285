// The config blocks of BodyInput and the `body` move connector: a robot body (battery, odometry, free paths) behind a binding.
import { z } from 'zod';
import { CameraConfigSchema } from './devices.js';
import { CommonInputFields } from './inputs.js';

/** Robot families whose bodies the runtime knows by their transports; `generic` is any simulated body. */
export const ROBOTS = ['generic', 'unitree_go2', 'unitree_g1', 'turtlebot4', 'limx_tron', 'ubtech_yanshee'] as const;
export type Robot = (typeof ROBOTS)[number];

/**
 * Bindings of a body. `sim` is the simulated body (devices/body/sim-body.ts): it needs nothing.
 * `unitree_dds` (a Unitree Go2 or G1 on its sport API) and `ros2` (a ROS 2 base: cmd_vel, odom,
 * battery_state) are carried over DDS (devices/dds/, the CycloneDDS addon); OM1's `ros2_zenoh` is
 * taken as `ros2`: DDS carries the same topics (docs/real-robots-dds.md). The others name a robot's
 * own bus that this build does not carry: choosing one is a check error that says what would be
 * needed, never a silent stand-in.
 */
export const BODY_BINDINGS = ['sim', 'unitree_dds', 'ros2', 'ros2_zenoh', 'limx_sdk', 'ubtech_http'] as const;
export type BodyBinding = (typeof BODY_BINDINGS)[number];

/** Bindings over DDS. */
export const DDS_BODY_BINDINGS: ReadonlySet<BodyBinding> = new Set(['unitree_dds', 'ros2', 'ros2_zenoh']);

/** What each transport this build does not carry would need; the reason `check` gives. */
export const MISSING_TRANSPORT: Record<'limx_sdk' | 'ubtech_http', string> = {
  limx_sdk: "LimX Dynamics' robot SDK (limxsdk over the robot's network): no LimX binding is built into cortexd",
  ubtech_http: "UBTech Yanshee's robot API (the YanAPI HTTP service on the robot): no UBTech binding is built into cortexd",
};

/**
 * What a body input reports. `localization`: the pose on the map and whether the robot is localised
 * (OM1's AMCL/lidar localisation; the simulated body always knows its pose); `navigation`: the state of
 * the navigation stack (the simulated body follows navigate_location's goals: idle, EXECUTING, SUCCEEDED).
 */
export const BODY_FACETS = ['battery', 'odometry', 'paths', 'localization', 'navigation'] as const;

const refuseRealTransport = (o: { binding: BodyBinding; robot: Robot }, ctx: z.RefinementCtx) => {
  if (o.binding === 'limx_sdk' || o.binding === 'ubtech_http')
    ctx.addIssue({
      code: 'custom',
      path: ['binding'],
      message: `binding "${o.binding}" needs ${MISSING_TRANSPORT[o.binding]}; use binding "sim" (a simulated body) or \`cortexd run --simulate\``,
    });
  if (o.binding === 'unitree_dds' && o.robot !== 'unitree_go2' && o.robot !== 'unitree_g1')
    ctx.addIssue({ code: 'custom', path: ['robot'], message: `binding "unitree_dds" drives robot "unitree_go2" or "unitree_g1", not "${o.robot}"` });
};

const BodyFields = {
  /** Which robot: names the body in the prompt and in WebSim; several entries with one robot share one body. */
  robot: z.enum(ROBOTS).default('generic'),
  binding: z.enum(BODY_BINDINGS).default('sim'),
  /** The network interface of the robot's bus (Unitree's `unitree_ethernet`), for a real transport. */
  network_interface: z.string().min(1).optional(),
  /** DDS bindings: the DDS domain id; absent: ROS_DOMAIN_ID from the environment, else 0. */
  domain_id: z.number().int().min(0).max(232).optional(),
  /** DDS bindings: the robot is lost when its state topic is silent this long (seconds). */
  lost_after_seconds: z.number().positive().max(60).default(1),
  /** ros2: the topics of the base (ROS names; `rt/` names are taken as they are). */
  cmd_vel_topic: z.string().min(1).default('/cmd_vel'),
  odom_topic: z.string().min(1).default('/odom'),
  battery_topic: z.string().min(1).default('/battery_state'),
  /** unitree_dds: the state topics (the G1 publishes its odometry as rt/odommodestate on recent firmware). */
  state_topic: z.string().min(1).default('rt/sportmodestate'),
  lowstate_topic: z.string().min(1).default('rt/lowstate'),
  /** unitree_dds on a G1: its battery (unitree_hg BmsState_; the G1's LowState_ has none). */
  bms_topic: z.string().min(1).default('rt/lf/bmsstate'),
  /** Battery of the simulated body at start, percent. */
  start_battery_percent: z.number().min(0).max(100).default(100),
  /** How fast the simulated battery drains, percent per minute (moving drains 2% per metre more). */
  drain_percent_per_minute: z.number().min(0).max(100).default(0.5),
};

export const BodyInputSchema = z
  .looseObject({
    ...CommonInputFields,
    ...BodyFields,
    /** What the input reports: battery charge, odometry (pose and distance) and the free paths around the body. */
    facets: z.array(z.enum(BODY_FACETS)).min(1).default(['battery', 'odometry']),
    /** Seconds between two readings. */
    poll_seconds: z.number().positive().default(1),
    /** At or below this charge the battery is reported low (and the message wakes the loop). */
    low_percent: z.number().min(0).max(100).default(20),
  })
  .superRefine(refuseRealTransport);
export type BodyInputConfig = z.output<typeof BodyInputSchema>;

export const BodyConnectorOptions = z
  .looseObject({
    ...BodyFields,
    /** Metres a `walk forward` / `walk back` command moves the simulated body. */
    step_m: z.number().positive().max(10).default(0.5),
    /** Degrees a `turn left` / `turn right` command turns it. */
    turn_deg: z.number().positive().max(360).default(45),
    /** Seconds one command takes on the simulated body (a real body takes step_m / linear_speed_mps, turn_deg / angular_speed_dps). */
    command_seconds: z.number().min(0).max(60).default(1),
    /** DDS bindings: forward speed of a walk, m/s (a hard cap of 1 m/s: a model never asks for more). */
    linear_speed_mps: z.number().positive().max(1).default(0.3),
    /** DDS bindings: turning speed, degrees per second (capped at 90). */
    angular_speed_dps: z.number().positive().max(90).default(30),
    /** DDS bindings: how often the velocity is repeated while a command runs (a base stops when cmd_vel goes quiet; a Move lapses in 1 s). */
    command_hz: z.number().min(2).max(50).default(10),
  })
  .superRefine(refuseRealTransport);
export type BodyConnectorOptions = z.output<typeof BodyConnectorOptions>;

/** PresenceInput: LocalVLMInput's camera and OpenCV face detection, read as a person's presence. */
export const PresenceInputSchema = z.looseObject({
  ...CommonInputFields,
  camera: CameraConfigSchema.prefault({ binding: 'opencv' }),
  /** Frames analysed per second at most. */
  fps: z.number().positive().max(30).default(2),
  /** Context key set true when a face comes into view (someone approaches the robot), false when none is seen. */
  approaching_key: z.string().min(1).default('person_approaching'),
  /** Context key holding whether a face is in view now. */
  present_key: z.string().min(1).default('person_present'),
});
export type PresenceInputConfig = z.output<typeof PresenceInputSchema>;

/** LidarInput: the free paths of the configuration's `lidar` (its geometry options live there, one sensor per robot). */
export const LidarInputSchema = z.looseObject({
  ...CommonInputFields,
  /** Seconds between two readings at most (a reading is also sent when the free paths change). */
  poll_seconds: z.number().positive().default(1),
});
export type LidarInputConfig = z.output<typeof LidarInputSchema>;
