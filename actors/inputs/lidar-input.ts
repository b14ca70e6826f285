// LidarInput: the free paths around the robot from its lidar (OM1's RPLidar input) as a prompt line and context values for context-aware rules.
import { type Observable, distinctUntilChanged, filter, map, merge, tap, timer } from 'rxjs';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { BodyBoard } from '../../src/cortex/bodies.js';
import { LidarInputSchema, type LidarInputConfig } from '../../src/plugins/schemas/body.js';
import type { LidarConfig } from '../../src/config/lidar.js';
import { describePaths, freePaths, type FreePaths } from '../../src/lidar/paths.js';
import { sharedLidar } from '../../devices/lidar/make.js';
import { BufferedInput } from './buffered-input.js';

interface Reading {
  at: number;
  /** Null: no scan for the blind time (the lidar is down or the motor stopped). */
  paths: FreePaths | null;
}

/** No scan for this long and the prompt says the robot cannot see. */
const BLIND_MS = 2000;

/**
 * Reads the scans of the configuration's lidar (the one the safety governor holds open: this input
 * opens nothing) and says the free paths when they change. Publishes `paths_clear` (forward, left,
 * right, back), `obstacle_ahead_m` (the nearest return ahead within the robot's width, or null) and
 * `lidar_blind`.
 */
export class LidarInput extends BufferedInput<Reading> {
  constructor(
    private readonly config: LidarInputConfig,
    private readonly lidar: LidarConfig,
    private readonly ctx: Pick<InputContext, 'logger' | 'signal' | 'publishContext' | 'bodies'>,
  ) {
    super({
      type: 'LidarInput',
      descriptor: config.descriptor ?? 'Information about objects and walls around you, to plan your movements and avoid bumping into things',
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'latest',
      ...(ctx.logger ? { logger: ctx.logger } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  }

  protected source(): Observable<Reading> {
    const lidar = sharedLidar(this.lidar, this.ctx.bodies ?? new BodyBoard(), this.ctx.logger ? { logger: this.ctx.logger } : {});
    let last = Date.now();
    const seen = lidar.scans$.pipe(
      tap((s) => (last = s.at)),
      map((s): Reading => ({ at: s.at, paths: freePaths(s, this.lidar) })),
    );
    const blind = timer(BLIND_MS, this.config.poll_seconds * 1000).pipe(
      filter(() => Date.now() - last > BLIND_MS),
      map((): Reading => ({ at: Date.now(), paths: null })),
    );
    const key = (r: Reading) => (r.paths ? `${r.paths.clear.join(',')}|${r.paths.aheadM}` : 'blind');
    return merge(seen, blind).pipe(
      distinctUntilChanged((a, b) => key(a) === key(b)),
      tap((r) => this.ctx.publishContext?.({ paths_clear: r.paths?.clear ?? [], obstacle_ahead_m: r.paths?.aheadM ?? null, lidar_blind: r.paths === null })),
    );
  }

  protected toMessage(r: Reading): InputMessage {
    const text = r.paths ? describePaths(r.paths) : 'The lidar sees nothing now (no scan): you cannot tell where obstacles are. DO NOT MOVE.';
    return { timestamp: r.at, text, final: r.paths === null };
  }
}

/** The LidarInput plugin (its descriptor is in src/plugins/body.ts). */
export const createLidarInput: InputFactory = (raw, ctx) => {
  if (!ctx.lidar) throw new Error('LidarInput needs the configuration\'s `lidar` block (source "rplidar", "ros2" or "sim")');
  return new LidarInput(LidarInputSchema.parse(raw ?? {}), ctx.lidar, ctx);
};
