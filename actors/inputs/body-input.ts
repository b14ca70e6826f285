// BodyInput: a robot body's battery, odometry and free paths (the simulated body here) as a "Body:" prompt line and context values.
import { type Observable, asyncScheduler, defer, distinctUntilChanged, finalize, map, merge, tap, timer, type SchedulerLike } from 'rxjs';
import type { InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { BodyInputSchema, DDS_BODY_BINDINGS, type BodyInputConfig } from '../../src/plugins/schemas/body.js';
import { ddsBodyOf } from '../../devices/dds/bodies.js';
import type { DdsBody } from '../../devices/dds/body.js';
import { type BodyState, simBody } from '../../devices/body/sim-body.js';
import { BufferedInput } from './buffered-input.js';

/** The simulated body's navigation, from its last command (the navigate_location connector labels its drive "navigate to X", its arrival "arrived at X"). */
function simNavigation(last: string): { navigating: boolean; navigation_status: string; navigation_goal?: string } {
  const going = /^navigate to (.+)$/.exec(last);
  if (going) return { navigating: true, navigation_status: 'EXECUTING', navigation_goal: going[1]! };
  const arrived = /^arrived at (.+)$/.exec(last);
  if (arrived) return { navigating: false, navigation_status: 'SUCCEEDED', navigation_goal: arrived[1]! };
  return { navigating: false, navigation_status: 'idle' };
}

/**
 * Reads the body every `poll_seconds` and at every move; emits a reading when what its facets show
 * changed. Publishes context for `context_aware` rules: `battery_percent`, `battery_low` (battery),
 * `odom_x`, `odom_y`, `odom_heading`, `odom_distance`, `moving` (odometry), `paths_clear` (paths),
 * `localized`, `map_x`, `map_y`, `map_heading` (localization), `navigating`, `navigation_status` (navigation).
 * The simulated body has no obstacles (every path is free), knows its pose exactly (always localised:
 * its odometry frame is the map); its navigation follows navigate_location's drives (see simNavigation).
 */
export class BodyInput extends BufferedInput<BodyState> {
  constructor(
    private readonly config: BodyInputConfig,
    private readonly ctx?: Pick<InputContext, 'logger' | 'signal' | 'publishContext' | 'bodies' | 'media'>,
    private readonly scheduler: SchedulerLike = asyncScheduler,
  ) {
    super({
      type: 'BodyInput',
      descriptor: config.descriptor ?? 'Body',
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'latest',
      ...(ctx?.logger ? { logger: ctx.logger } : {}),
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
    });
  }

  private has(facet: BodyInputConfig['facets'][number]): boolean {
    return this.config.facets.includes(facet);
  }

  private dds: DdsBody | undefined;

  protected source(): Observable<BodyState> {
    if (!DDS_BODY_BINDINGS.has(this.config.binding)) return this.follow(simBody(this.config.robot, this.config, this.ctx?.bodies));
    // A robot over DDS: its body is shared with the move connector and let go when this input stops.
    return defer(() => {
      const body = ddsBodyOf(this.config);
      this.dds = body;
      // A recording (--record) gets the robot's DDS samples: odometry and battery in, commands out.
      const untap = this.ctx?.media?.dds ? body.participant.tap(this.ctx.media) : undefined;
      return this.follow(body).pipe(finalize(() => (untap?.(), body.release(), (this.dds = undefined))));
    });
  }

  private follow(body: { read(): BodyState; state$: Observable<BodyState> }): Observable<BodyState> {
    const key = (s: BodyState) =>
      JSON.stringify([
        this.has('battery') ? Math.floor(s.battery_percent) : 0,
        this.has('odometry') || this.has('localization') ? [s.x, s.y, s.heading, s.last] : 0,
        this.dds ? this.dds.present$.value : true,
      ]);
    return merge(timer(0, this.config.poll_seconds * 1000, this.scheduler).pipe(map(() => body.read())), body.state$).pipe(
      distinctUntilChanged((a, b) => key(a) === key(b)),
      tap((s) =>
        this.ctx?.publishContext?.({
          ...(this.has('battery') ? { battery_percent: s.battery_percent, battery_low: s.battery_percent <= this.config.low_percent } : {}),
          ...(this.has('odometry')
            ? { odom_x: s.x, odom_y: s.y, odom_heading: s.heading, odom_distance: s.distance, moving: !/^(stand still|sit)$/.test(s.last) }
            : {}),
          ...(this.has('paths') ? { paths_clear: ['forward', 'left', 'right', 'back'] } : {}),
          ...(this.has('localization') ? { localized: true, map_x: s.x, map_y: s.y, map_heading: s.heading } : {}),
          ...(this.has('navigation') ? simNavigation(s.last) : {}),
        }),
      ),
    );
  }

  protected toMessage(s: BodyState): InputMessage {
    const parts: string[] = [];
    if (this.has('battery')) parts.push(`battery ${Math.floor(s.battery_percent)}%${s.battery_percent <= this.config.low_percent ? ' (low)' : ''}`);
    if (this.has('odometry')) parts.push(`at x ${s.x} m, y ${s.y} m, heading ${s.heading} deg, ${s.distance} m travelled, last move: ${s.last}`);
    // A robot over DDS reports no free paths, localisation or navigation here (no lidar or map topics yet): only what it measured.
    if (this.has('paths') && !this.dds) parts.push('free paths: forward, left, right, back');
    if (this.has('localization') && !this.dds) parts.push(`localized on the map at x ${s.x} m, y ${s.y} m, heading ${s.heading} deg`);
    if (this.has('navigation') && !this.dds) {
      const n = simNavigation(s.last);
      parts.push(
        n.navigating ? `navigating to ${n.navigation_goal}` : n.navigation_goal ? `navigation succeeded: at ${n.navigation_goal}` : 'navigation idle (no goal)',
      );
    }
    const low = this.has('battery') && s.battery_percent <= this.config.low_percent;
    const dds = this.dds;
    if (dds && !dds.present$.value) {
      // Never seen yet: waiting (not a loss); seen and gone: lost.
      const text = / yet on /.test(dds.absence)
        ? `waiting for the robot (${dds.absence})`
        : `lost the robot (${dds.absence}); it does not move until it is back`;
      return { timestamp: s.at, text: `${this.config.robot} (over DDS): ${text}`, final: true };
    }
    const battery = Number.isNaN(s.battery_percent) ? parts.map((p) => (p.startsWith('battery NaN') ? 'battery unknown' : p)) : parts;
    return { timestamp: s.at, text: `${this.config.robot} (${dds ? 'over DDS' : 'simulated'}): ${battery.join('; ')}`, final: low };
  }
}

/** The BodyInput plugin (its descriptor is in src/plugins/body.ts). */
export const createBodyInput: InputFactory = (raw, ctx) => new BodyInput(BodyInputSchema.parse(raw ?? {}), ctx);
