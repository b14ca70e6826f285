// A lidar as the runtime sees it: a device its session actor opens, a hot stream of scans, and notices for the bus; every source is one of these.
import type { Observable } from 'rxjs';
import type { Scan } from '../../src/lidar/scan.js';
import type { OpenableDevice } from '../device-link.js';

/**
 * One lidar. Nothing flows until a session (actors/streams/session-machine.ts)
 * opens `device`: the safety governor runs it as its child `device:lidar` for as long as the agent
 * runs, and inputs only subscribe to `scans$`. A source never reopens itself.
 *
 * A new source is one more file in devices/lidar/
 * that returns this, and one more `source` value in src/config/lidar.ts and in `sharedLidar()`
 * (devices/lidar/make.ts). Nothing above it changes.
 */
export interface LidarSource {
  /** What a person calls it in a message: `RPLidar on /dev/ttyUSB0`, `simulated lidar of generic`. */
  readonly name: string;
  readonly device: OpenableDevice;
  /** Hot: each full revolution, while a session holds the device. */
  readonly scans$: Observable<Scan>;
  /** Hot: what the source wants said on the bus without failing (garbage skipped, a health warning, the sensor's model). */
  readonly notices$: Observable<string>;
  /** Ends the source for good (completes its observables); the process's shared sources are never ended. */
  end(): void;
}
