// The lidar of a configuration's `lidar` block (RPLidar on serial, LaserScan over ROS 2, or simulated): one per process and key, shared by its users.
import type { Logger } from 'pino';
import type { BodyBoard } from '../../src/cortex/bodies.js';
import type { LidarConfig } from '../../src/config/lidar.js';
import { simBody } from '../body/sim-body.js';
import { createRos2Lidar } from './ros2-lidar.js';
import { createRplidar } from './rplidar.js';
import { createSimLidar } from './sim-lidar.js';
import type { LidarSource } from './source.js';

/** The key a lidar is shared by: two blocks naming one port (or one simulated robot) are one sensor. */
export function lidarKey(config: LidarConfig): string {
  if (config.source === 'rplidar') return `lidar:rplidar:${config.port}`;
  if (config.source === 'ros2') return `lidar:ros2:${config.domain_id ?? 'env'}:${config.network_interface ?? ''}:${config.topic}`;
  return `lidar:sim:${config.robot}`;
}

/**
 * The process's lidar for `config` on `board` (the robot's things, which outlive a reload), made the
 * first time.
 */
export function sharedLidar(config: LidarConfig, board: BodyBoard, ctx: { logger?: Logger } = {}): LidarSource {
  return board.of(lidarKey(config), () => {
    if (config.source === 'rplidar') return createRplidar(config, ctx);
    if (config.source === 'ros2') return createRos2Lidar(config, ctx);
    return createSimLidar(config, simBody(config.robot, { start_battery_percent: 100, drain_percent_per_minute: 0.5 }, board));
  });
}
