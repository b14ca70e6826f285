// Which DDS body a body entry means (a Unitree on its sport API, a ROS 2 base), from the entry's options.
import type { BodyConnectorOptions } from '../../src/plugins/schemas/body.js';
import type { DdsBody } from './body.js';
import { ros2Base } from './ros2/base.js';
import { unitreeSport } from './unitree/sport.js';

export type DdsBodyFields = Pick<
  BodyConnectorOptions,
  | 'robot'
  | 'binding'
  | 'domain_id'
  | 'network_interface'
  | 'lost_after_seconds'
  | 'cmd_vel_topic'
  | 'odom_topic'
  | 'battery_topic'
  | 'state_topic'
  | 'lowstate_topic'
  | 'bms_topic'
>;

/** The DDS body a connector or input of these options drives (shared per robot in the process; release it when done). */
export function ddsBodyOf(o: DdsBodyFields): DdsBody {
  const base = { robot: o.robot, domain: o.domain_id, networkInterface: o.network_interface, lostAfterMs: o.lost_after_seconds * 1000 };
  if (o.binding === 'unitree_dds')
    return unitreeSport(base, o.robot === 'unitree_g1' ? 'unitree_g1' : 'unitree_go2', { state: o.state_topic, lowstate: o.lowstate_topic, bms: o.bms_topic });
  return ros2Base(base, { cmd_vel: o.cmd_vel_topic, odom: o.odom_topic, battery: o.battery_topic });
}
