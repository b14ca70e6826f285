// The config blocks of BodyInput and the `body` move connector: a robot body (battery, odometry, free paths) behind a binding.
import { z } from 'zod';
import { CameraConfigSchema } from './devices.js';
import { CommonInputFields } from './inputs.js';

/** Robot families whose bodies the runtime knows by their transports; `generic` is any simulated body. */
export const ROBOTS = ['generic', 'unitree_go2', 'unitree_g1', 'turtlebot4', 'limx_tron', 'ubtech_yanshee'] as const;
export type Robot = (typeof ROBOTS)[number];

/**
 * Bindings of a body. `sim` is the simulated body (devices/body/sim-body.ts): it needs nothing. The
 * others name a robot's own bus, none of which this build carries: choosing one is a check error that
 * says what would be needed, never a silent stand-in.
 */
export const BODY_BINDINGS = ['sim', 'unitree_dds', 'ros2_zenoh', 'limx_sdk', 'ubtech_http'] as const;
export type BodyBinding = (typeof BODY_BINDINGS)[number];

/** What each real transport would need; the reason `check` gives. */
export const MISSING_TRANSPORT: Record<Exclude<BodyBinding, 'sim'>, string> = {
  unitree_dds: "Unitree's DDS bus (unitree_sdk2 over CycloneDDS on the robot's ethernet): no DDS binding is built into cortexd",
  ros2_zenoh: 'ROS 2 topics over Zenoh (zenoh-bridge-ros2dds on the TurtleBot 4): no Zenoh/ROS 2 binding is built into cortexd',
  limx_sdk: "LimX Dynamics' robot SDK (limxsdk over the robot's network): no LimX binding is built into cortexd",
  ubtech_http: "UBTech Yanshee's robot API (the YanAPI HTTP service on the robot): no UBTech binding is built into cortexd",
};

/**
 * What a body input reports. `localization`: the pose on the map and whether the robot is localised
 * (OM1's AMCL/lidar localisation; the simulated body always knows its pose); `navigation`: the state of
 * the navigation stack (the simulated body takes no navigation goals: it is always idle).
 */
export const BODY_FACETS = ['battery', 'odometry', 'paths', 'localization', 'navigation'] as const;

const refuseRealTransport = (o: { binding: BodyBinding }, ctx: z.RefinementCtx) => {
  if (o.binding !== 'sim')
    ctx.addIssue({
      code: 'custom',
      path: ['binding'],
      message: `binding "${o.binding}" needs ${MISSING_TRANSPORT[o.binding]}; use binding "sim" (a simulated body) or \`cortexd run --simulate\``,
    });
};

const BodyFields = {
  /** Which robot: names the body in the prompt and in WebSim; several entries with one robot share one body. */
  robot: z.enum(ROBOTS).default('generic'),
  binding: z.enum(BODY_BINDINGS).default('sim'),
  /** The network interface of the robot's bus (Unitree's `unitree_ethernet`), for a real transport. */
  network_interface: z.string().min(1).optional(),
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
    /** Seconds one command takes on the simulated body. */
    command_seconds: z.number().min(0).max(60).default(1),
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
