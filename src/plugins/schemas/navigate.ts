// The navigate_location action: its tool argument (a named place) and its `nav2` connector's block (where the places come from, which body or bus goes there).
import { z } from 'zod';
import { ROBOTS } from './body.js';

export const NavigateArgs = z.object({
  location: z.string().trim().min(1).max(120).describe('the name of a known place on the map to go to, e.g. "kitchen"'),
});

/** A place given in the configuration: map coordinates in metres, heading in degrees (counter-clockwise). */
export const PlaceSchema = z.object({ x: z.number(), y: z.number(), heading: z.number().min(-360).max(360).default(0) });

/** Where the robot's map server lists its named places (OM1's default: the robot's own map service). */
export const DEFAULT_LOCATIONS_URL = 'http://localhost:5000/maps/locations/list';

/**
 * The `nav2` connector. Places come from `locations` (in the file) and `locations_url` (a map server's
 * list: `{name: {pose: {position, orientation}}}`, a list of `{name, pose}`, or either inside
 * `{message: "<json>"}`), fetched again after `refresh_seconds`. `sim` drives the simulated body there;
 * `ros2` and `unitree_dds` publish a geometry_msgs/PoseStamped goal on `goal_topic` for the robot's
 * navigation stack (Nav2's goal topic) over DDS and follow its action status topic.
 */
export const NavigateConnectorOptions = z
  .looseObject({
    robot: z.enum(ROBOTS).default('generic'),
    binding: z.enum(['sim', 'ros2', 'unitree_dds']).default('sim'),
    locations: z.record(z.string().min(1), PlaceSchema).default({}),
    locations_url: z.url({ protocol: /^https?$/ }).optional(),
    /** Seconds an HTTP request for the places may take. */
    timeout_seconds: z.number().positive().max(60).default(5),
    /** Seconds a fetched list is used before it is fetched again. */
    refresh_seconds: z.number().min(0).max(3600).default(30),
    goal_topic: z.string().min(1).default('/goal_pose'),
    status_topic: z.string().min(1).default('/navigate_to_pose/_action/status'),
    frame_id: z.string().min(1).default('map'),
    domain_id: z.number().int().min(0).max(232).optional(),
    network_interface: z.string().min(1).optional(),
    /** sim: metres per second the simulated body drives to a place (the command lasts distance / speed, at most 10 s). */
    sim_speed_mps: z.number().positive().max(5).default(0.5),
  })
  .superRefine((o, ctx) => {
    if (!o.locations_url && Object.keys(o.locations).length === 0)
      ctx.addIssue({
        code: 'custom',
        path: ['locations'],
        message: 'no places: give locations {name: {x, y, heading}} or locations_url (a map server listing them)',
      });
  });
export type NavigateConnectorOptions = z.output<typeof NavigateConnectorOptions>;
