// The `safety` block of a configuration (global, and per mode): motion limits, dead-man timer, geofence and e-stop sources, as zod schemas.
import { z } from 'zod';

/*
 * An extension of the configuration format (agent-runtime-config.md has no safety block). Unlike the
 * rest of the format these objects are strict: a misspelt limit (`deadman_second`) is an error, never
 * a warning, because a limit that is silently ignored is worse than a configuration that does not load.
 * Units follow the format: seconds and metres here, milliseconds in code (src/safety/policy.ts).
 */

const Latitude = z.number().min(-90).max(90);
const Longitude = z.number().min(-180).max(180);
export const LatLon = z.strictObject({ latitude: Latitude, longitude: Longitude });

/** A circle (centre and radius in metres) or a polygon of at least three corners. */
export const Geofence = z.union([
  z.strictObject({ center: LatLon, radius_m: z.number().positive().describe('radius of the allowed area in metres') }),
  z.strictObject({ polygon: z.array(LatLon).min(3, 'a polygon needs at least three corners').describe('corners of the allowed area, in order') }),
]);
export type GeofenceConfig = z.infer<typeof Geofence>;

export const RateLimit = z.strictObject({
  commands: z.number().int().positive().describe('most motion commands accepted...'),
  per_seconds: z.number().positive().describe('...in any window of this many seconds'),
});

/** The limits a mode may override; every field falls back to the global block, then to the built-in default. */
const limits = {
  motion: z.boolean().optional().describe('false forbids every motion command in the mode (default true)'),
  allowed_values: z
    .array(z.string().min(1))
    .optional()
    .describe('motion values the mode accepts, e.g. ["turn left", "turn right"]; absent: every value of the action'),
  stop_value: z.string().min(1).optional().describe('the value that means "stop": always accepted unless the e-stop is latched (default "stand still")'),
  return_value: z.string().min(1).optional().describe('the one motion value accepted outside the geofence (default: none)'),
  rate_limit: RateLimit.optional().describe('most motion commands per window (default 4 per 1 s)'),
  max_continuous_seconds: z.number().positive().optional().describe('longest continuous motion before a stop (default 60)'),
  rest_seconds: z.number().nonnegative().optional().describe('motion refused for this long after max_continuous_seconds stopped it (default 2)'),
  deadman_seconds: z.number().positive().optional().describe('motion stops when no motion command arrived for this long (default 3)'),
  max_linear_speed_mps: z
    .number()
    .positive()
    .max(10)
    .optional()
    .describe("fastest a robot body may drive, m/s: every velocity a DDS body sends is capped to it (default: the connector's own speed)"),
  max_angular_speed_dps: z
    .number()
    .positive()
    .max(720)
    .optional()
    .describe("fastest a robot body may turn, degrees per second: every yaw rate a DDS body sends is capped to it (default: the connector's own)"),
  model_stall_seconds: z.number().positive().optional().describe('motion stops when a model call has shown no progress for this long (default 5)'),
  stop_on_service_loss: z
    .boolean()
    .optional()
    .describe('a failed model call or a failing ASR/VLM socket stops motion and refuses it until the service answers again (default true)'),
  geofence: Geofence.nullable().optional().describe('allowed area (needs GPS: gps_fix, latitude, longitude); null in a mode removes the global fence'),
};

export const ModeSafety = z.strictObject(limits);
export type ModeSafetyConfig = z.infer<typeof ModeSafety>;

/** A serial line on which a microcontroller reports its e-stop button (the motor controller's own line may be used). */
export const EstopSerial = z.strictObject({
  binding: z.enum(['serialport', 'mock']).default('serialport'),
  path: z.string().min(1),
  baud_rate: z.number().int().positive().default(115200),
  sentence: z.string().min(1).default('ESTOP').describe('line that latches the e-stop'),
  release_sentence: z
    .string()
    .min(1)
    .nullable()
    .default(null)
    .describe('line that releases it (default none: release by a person through the socket, WebSim or the fleet)'),
});

/** The local Unix socket of `cortexd estop`. */
export const EstopSocket = z.strictObject({
  enabled: z.boolean().default(true),
  path: z.string().min(1).optional().describe('default <runtime dir>/estop-<config name>.sock'),
  group: z
    .union([z.string().min(1), z.number().int().nonnegative()])
    .optional()
    .describe('group allowed to use the socket besides root (default the service process group)'),
});

/** The obstacle guard: motion toward what the lidar (the configuration's `lidar` block) sees nearby is slowed, refused, stopped. */
export const ObstacleGuard = z
  .strictObject({
    stop_distance_m: z.number().positive().max(10).describe('motion toward a return nearer than this is refused, and stopped while it runs'),
    slow_distance_m: z.number().positive().max(20).describe('within this the speed is scaled down, to nothing at stop_distance_m'),
    max_scan_age_ms: z
      .number()
      .int()
      .positive()
      .max(10_000)
      .default(500)
      .describe('a scan older than this counts as blind: no motion toward space the lidar cannot see'),
  })
  .refine((o) => o.slow_distance_m >= o.stop_distance_m, { message: 'slow_distance_m must be at least stop_distance_m', path: ['slow_distance_m'] });
export type ObstacleGuardConfig = z.infer<typeof ObstacleGuard>;

export const SafetyConfig = z.strictObject({
  ...limits,
  obstacle: ObstacleGuard.optional().describe('the obstacle guard (needs the `lidar` block); the same in every mode'),
  estop_serial: EstopSerial.optional(),
  estop_socket: EstopSocket.default({ enabled: true }),
});
export type SafetyConfigInput = z.input<typeof SafetyConfig>;
export type SafetyConfig = z.infer<typeof SafetyConfig>;
