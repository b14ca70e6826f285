// The simulated lidar: scans of the simulated body's room from its pose, at the configured rate, while a session holds it.
import { Subject } from 'rxjs';
import { LinkEnd, type OpenableDevice } from '../device-link.js';
import type { SimLidarConfig } from '../../src/config/lidar.js';
import type { Scan } from '../../src/lidar/scan.js';
import type { SimBody } from '../body/sim-body.js';
import { Room } from '../body/room.js';
import type { LidarSource } from './source.js';

/**
 * A sensor mounted on `body` as `sensor_mounting_angle` says, turning clockwise like an RPLidar:
 * beam i is at `i * 360 / beams` degrees clockwise from the sensor's zero. Each open run ticks at
 * `hz` and takes a scan of the room from the body's pose at that moment; closing stops the timer.
 */
export function createSimLidar(config: SimLidarConfig, body: SimBody): LidarSource {
  const room = new Room(config.room);
  const scans = new Subject<Scan>();
  const n = config.beams;
  const angles = new Float32Array(n);
  for (let i = 0; i < n; i++) angles[i] = (-i * 2 * Math.PI) / n;
  const offset = config.sensor_mounting_angle - 180;

  const take = (): Scan => {
    const s = body.read();
    const ranges = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      // The beam's robot angle runs clockwise; the world's counter-clockwise.
      const world = ((s.heading - ((i * 360) / n + offset)) * Math.PI) / 180;
      const d = room.cast(s.x, s.y, world);
      ranges[i] = d <= config.range_max_m ? d : Number.NaN;
    }
    return { at: Date.now(), angles, ranges };
  };

  const device: OpenableDevice = {
    connect: async () => {
      const end = new LinkEnd();
      const timer = setInterval(() => scans.next(take()), 1000 / config.hz);
      return {
        bufferedAmount: () => 0,
        subscribe: (listener) => end.subscribe(listener),
        close: () => clearInterval(timer),
      };
    },
    attach: () => () => undefined,
    backoff: { initialMs: 500, maxMs: 5000 },
  };
  return {
    name: `simulated lidar of ${config.robot}`,
    device,
    scans$: scans.asObservable(),
    notices$: new Subject<string>().asObservable(),
    end: () => scans.complete(),
  };
}
