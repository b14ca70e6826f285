// The lidar of a configuration's `lidar` block: its source (RPLidar on serial, the simulated body's), one per process and key, shared by the governor and the inputs.
import type { Logger } from 'pino';
import type { BodyBoard } from '../../src/cortex/bodies.js';
import type { LidarConfig } from '../../src/config/lidar.js';
import { simBody } from '../body/sim-body.js';
import { createRplidar } from './rplidar.js';
import { createSimLidar } from './sim-lidar.js';
import type { LidarSource } from './source.js';

/** The key a lidar is shared by: two blocks naming one port (or one simulated robot) are one sensor. */
export function lidarKey(config: LidarConfig): string {
  return config.source === 'rplidar' ? `lidar:rplidar:${config.port}` : `lidar:sim:${config.robot}`;
}

/**
 * The process's lidar for `config` on `board` (the robot's things, which outlive a reload), made the
 * first time. A ROS 2 `sensor_msgs/LaserScan` source is one more case here.
 */
export function sharedLidar(config: LidarConfig, board: BodyBoard, ctx: { logger?: Logger } = {}): LidarSource {
  return board.of(lidarKey(config), () =>
    config.source === 'rplidar'
      ? createRplidar(config, ctx)
      : createSimLidar(config, simBody(config.robot, { start_battery_percent: 100, drain_percent_per_minute: 0.5 }, board)),
  );
}
