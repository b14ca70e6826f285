// The `lidar` block of a configuration: the robot's one 2D lidar (RPLidar, ROS 2 LaserScan or simulated) and how it sits on the robot (OM1's options).
import { z } from 'zod';
import { ROBOTS } from '../plugins/schemas/body.js';

/*
 * An extension of the configuration format, strict like `safety` (a misspelt option is an error):
 * the lidar belongs to the robot, not to a mode, so the obstacle guard of the safety governor and
 * every mode's free paths read the same sensor. Units: metres, degrees, milliseconds (the names say).
 */

/** The geometry fields: OM1's RPLidar options, with OM1's names, defaults and meaning (src/lidar/scan.ts). */
const geometry = {
  half_width_robot: z.number().positive().max(5).default(0.2).describe('half the robot width, m: a path is free when no return is nearer than this to it'),
  relevant_distance_max: z.number().positive().max(50).default(1.1).describe('free paths ignore returns farther than this, m'),
  relevant_distance_min: z.number().nonnegative().max(5).default(0.08).describe('returns nearer than this, m, are ignored (the robot itself)'),
  sensor_mounting_angle: z
    .number()
    .min(-360)
    .max(360)
    .default(180)
    .describe("degrees from the sensor's zero to the robot's rear, clockwise: 180 = the sensor's zero points forward"),
  angles_blanked: z
    .array(z.tuple([z.number().min(-180).max(180), z.number().min(-180).max(180)]))
    .default([])
    .describe('robot angle ranges [from, to], degrees -180..180 clockwise from forward, whose returns are ignored'),
  simple_paths: z.boolean().default(false).describe('only say whether the robot can advance (a robot that can always turn in place: TurtleBot 4)'),
};

export const RPLIDAR_MODELS = ['a1', 'a2m8', 'a2m12', 'a3', 'c1', 's1'] as const;
const MODEL_BAUD: Record<(typeof RPLIDAR_MODELS)[number], number> = { a1: 115200, a2m8: 115200, a2m12: 256000, a3: 256000, c1: 460800, s1: 256000 };
const MODEL_MOTOR: Record<(typeof RPLIDAR_MODELS)[number], 'dtr' | 'pwm' | 'speed_ctrl'> = {
  a1: 'dtr',
  a2m8: 'dtr',
  a2m12: 'pwm',
  a3: 'pwm',
  c1: 'speed_ctrl',
  s1: 'speed_ctrl',
};

const Rplidar = z.strictObject({
  source: z.literal('rplidar'),
  ...geometry,
  port: z.string().min(1).default('/dev/ttyUSB0').describe('serial port of the sensor (its USB adapter)'),
  model: z.enum(RPLIDAR_MODELS).default('a1').describe('sensor model: sets the default baud rate and motor control'),
  baud_rate: z.number().int().positive().optional().describe('default by model: a1/a2m8 115200, a2m12/a3/s1 256000, c1 460800'),
  motor: z
    .enum(['dtr', 'pwm', 'speed_ctrl', 'none'])
    .optional()
    .describe('how the motor is started: DTR line (A1, A2M8), SET_MOTOR_PWM (A2M12, A3), MOTOR_SPEED_CTRL (C1, S1), none'),
  motor_pwm: z.number().int().min(0).max(1023).default(660),
  motor_rpm: z.number().int().min(0).max(3000).default(600),
  answer_timeout_ms: z.number().int().positive().default(1000).describe('longest wait for an answer to GET_HEALTH, GET_INFO, SCAN'),
  spin_timeout_ms: z.number().int().positive().default(3000).describe('no full revolution for this long: the motor does not spin; the sensor is reopened'),
  reopen_initial_ms: z.number().int().positive().default(500),
  reopen_max_ms: z.number().int().positive().default(5000),
});

export const RoomObstacle = z.union([
  z.strictObject({ x: z.number(), y: z.number(), radius_m: z.number().positive().describe('a round obstacle (a chair leg, a child)') }),
  z.strictObject({ x: z.number(), y: z.number(), width_m: z.number().positive(), depth_m: z.number().positive() }),
]);

/** The simulated room, in the simulated body's start frame: x forward, y to the left, metres. */
export const Room = z.strictObject({
  x_min: z.number().default(-1.5),
  x_max: z.number().default(2.5),
  y_min: z.number().default(-2),
  y_max: z.number().default(2),
  obstacles: z.array(RoomObstacle).default([{ x: 1.2, y: 1.2, radius_m: 0.25 }]),
});
export type RoomConfig = z.output<typeof Room>;

/** A `sensor_msgs/LaserScan` topic over ROS 2 (DDS on the wire, devices/lidar/ros2-lidar.ts): the robot's own lidar driver publishes it. */
const Ros2 = z.strictObject({
  source: z.literal('ros2'),
  ...geometry,
  topic: z
    .string()
    .regex(/^(rt\/)?\/?[A-Za-z_~][A-Za-z0-9_/]*$/, 'a ROS 2 topic name such as /scan (or its DDS name rt/scan)')
    .default('/scan')
    .describe('the sensor_msgs/msg/LaserScan topic (ROS name /scan, or the DDS name rt/scan)'),
  domain_id: z.number().int().min(0).max(232).optional().describe('the DDS domain; default ROS_DOMAIN_ID, else 0'),
  network_interface: z.string().min(1).optional().describe("the interface of the robot's network (CYCLONEDDS_URI, when set, wins)"),
  lost_after_ms: z
    .number()
    .int()
    .positive()
    .default(1000)
    .describe('no scan for this long: the lidar is lost (said on the bus; the guard is blind) until scans come back'),
  reopen_initial_ms: z.number().int().positive().default(500),
  reopen_max_ms: z.number().int().positive().default(5000),
});

const Sim = z.strictObject({
  source: z.literal('sim'),
  ...geometry,
  robot: z.enum(ROBOTS).default('generic').describe('the simulated body whose pose the scan is taken from'),
  hz: z.number().positive().max(50).default(10),
  beams: z.number().int().min(8).max(4096).default(360),
  range_max_m: z.number().positive().max(100).default(12),
  room: Room.prefault({}),
});

export const LidarConfig = z
  .discriminatedUnion('source', [Rplidar, Ros2, Sim])
  .transform((c) => (c.source === 'rplidar' ? { ...c, baud_rate: c.baud_rate ?? MODEL_BAUD[c.model], motor: c.motor ?? MODEL_MOTOR[c.model] } : c));
export type LidarConfig = z.output<typeof LidarConfig>;
export type RplidarConfig = Extract<LidarConfig, { source: 'rplidar' }>;
export type SimLidarConfig = Extract<LidarConfig, { source: 'sim' }>;
export type Ros2LidarConfig = Extract<LidarConfig, { source: 'ros2' }>;
