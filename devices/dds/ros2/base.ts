// A ROS 2 base over DDS (TurtleBot 4, anything with cmd_vel): geometry_msgs/Twist out, nav_msgs/Odometry and sensor_msgs/BatteryState in, no ROS installed.
import { DdsBody, type DdsBodyOptions, sharedDdsBody, yawDegOfQuaternion } from '../body.js';
import type { DdsReader, DdsWriter } from '../participant.js';

export interface Ros2BaseTopics {
  /** ROS names (`/cmd_vel`) or DDS names (`rt/cmd_vel`). */
  cmd_vel: string;
  odom: string;
  battery: string;
}

/** A ROS topic name as DDS carries it: `/cmd_vel` and `cmd_vel` are `rt/cmd_vel`; a name already `rt/...` is kept. */
export function ddsTopic(name: string): string {
  if (name.startsWith('rt/')) return name;
  return `rt/${name.replace(/^\/+/, '')}`;
}

interface Twist {
  linear: { x: number; y: number; z: number };
  angular: { x: number; y: number; z: number };
}
interface Odometry {
  pose: { pose: { position: { x: number; y: number }; orientation: { x: number; y: number; z: number; w: number } } };
}
interface BatteryState {
  percentage: number;
  voltage: number;
}

const ZERO: Twist = { linear: { x: 0, y: 0, z: 0 }, angular: { x: 0, y: 0, z: 0 } };

export class Ros2Base extends DdsBody {
  private readonly cmd: DdsWriter<Twist>;
  private readonly odom: DdsReader<Odometry>;
  private readonly batteryState: DdsReader<BatteryState>;

  constructor(options: DdsBodyOptions, topics: Ros2BaseTopics) {
    super(options, ddsTopic(topics.odom));
    this.cmd = this.participant.writer<Twist>(ddsTopic(topics.cmd_vel), 'geometry_msgs/msg/Twist');
    this.odom = this.participant.reader<Odometry>(ddsTopic(topics.odom), 'nav_msgs/msg/Odometry');
    this.batteryState = this.participant.reader<BatteryState>(ddsTopic(topics.battery), 'sensor_msgs/msg/BatteryState');
    this.follow(
      this.odom.messages$.subscribe((o) => {
        this.seen();
        const p = o.pose.pose;
        this.pose(p.position.x, p.position.y, yawDegOfQuaternion(p.orientation));
      }),
    );
    this.follow(
      this.batteryState.messages$.subscribe((b) => {
        // sensor_msgs/BatteryState: percentage 0..1, NaN when the driver does not know it.
        if (Number.isFinite(b.percentage)) this.battery(b.percentage * 100);
      }),
    );
  }

  drive(vx: number, vy: number, wz: number): void {
    this.cmd.publish({ linear: { x: vx, y: vy, z: 0 }, angular: { x: 0, y: 0, z: wz } });
  }

  stop(): void {
    this.cmd.publish(ZERO);
  }

  gesture(): boolean {
    return false;
  }

  protected closeTopics(): void {
    this.odom.close();
    this.batteryState.close();
    this.cmd.close();
  }
}

/** The ROS 2 base of `robot` in this process (one per robot, domain and topics). */
export function ros2Base(options: DdsBodyOptions, topics: Ros2BaseTopics): Ros2Base {
  return sharedDdsBody(`ros2|${options.robot}|${options.domain ?? ''}|${topics.cmd_vel}`, () => new Ros2Base(options, topics));
}
