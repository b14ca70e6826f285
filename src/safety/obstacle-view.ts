// What the obstacle guard knows now: the newest scan's clearance and the speed share each heading may use
// The lidar watcher writes the clearance; motion connectors read the speed shares.
import { obstacleVerdict, speedScale, type Clearance, type Heading, type ObstaclePolicy, type Travel } from './obstacle.js';

const TRAVELS: readonly Travel[] = ['forward', 'back', 'left', 'right', 'turn'];
const HEADINGS: readonly Heading[] = ['forward', 'back', 'left', 'right'];

/**
 * Like the e-stop gate, a plain object between a data-plane writer and the governor's decisions:
 * the lidar watcher (actors/safety/obstacle-watch.ts) writes each scan's clearance, the governor
 * reads the verdict before every motion command, synchronously. Times are the wall clock of the
 * scans (ms since the epoch). Nothing here keeps a scan: four distances and a time.
 */
export class ObstacleView {
  private clearance: Clearance | null = null;
  private at = 0;

  constructor(
    readonly policy: ObstaclePolicy,
    readonly halfWidthM: number,
    readonly speed: SpeedLimit = new SpeedLimit(),
  ) {}

  update(clearance: Clearance, at: number): void {
    this.clearance = clearance;
    this.at = at;
    for (const h of HEADINGS) this.speed.scales[h] = speedScale(clearance[h], this.policy);
  }

  /** The scan went stale: every heading's speed share is 0 until a fresh one. */
  blind(): void {
    for (const h of HEADINGS) this.speed.scales[h] = 0;
  }

  verdict(travel: Travel, now = Date.now()) {
    return obstacleVerdict(this.policy, travel, this.clearance, this.at, now, this.halfWidthM);
  }

  /** The travels refused now, with the reason of each. */
  blocked(now = Date.now()): Partial<Record<Travel, string>> {
    const out: Partial<Record<Travel, string>> = {};
    for (const t of TRAVELS) {
      const v = this.verdict(t, now);
      if (!v.ok) out[t] = v.reason;
    }
    return out;
  }

  /** The newest clearance and its time, for WebSim and tests. */
  latest(): { clearance: Clearance; at: number } | null {
    return this.clearance ? { clearance: this.clearance, at: this.at } : null;
  }
}

/**
 * The share of its speed each straight heading may use now (1 free, 0 stopped), set by the obstacle
 * guard: a motion connector that can vary its speed (the simulated body, a DDS body) multiplies by it
 * as it goes. And the fastest a body may drive and turn, set by the safety governor from the limits of
 * the mode that granted the running command (`max_linear_speed_mps`, `max_angular_speed_dps`): a DDS
 * body caps every velocity it sends to them. One per robot in a process, on the board of its bodies,
 * under SPEED_LIMIT_KEY.
 */
export class SpeedLimit {
  readonly scales: Record<Heading, number> = { forward: 1, back: 1, left: 1, right: 1 };
  /** m/s; Infinity: no cap beyond the connector's own. */
  maxLinearMps = Number.POSITIVE_INFINITY;
  /** Degrees per second; Infinity: no cap beyond the connector's own. */
  maxAngularDps = Number.POSITIVE_INFINITY;
  scale(h: Heading): number {
    return this.scales[h];
  }
}

export const SPEED_LIMIT_KEY = 'safety:speed-limit';
