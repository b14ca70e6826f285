// The simulated robot body: battery that drains with time and distance, a pose that follows move commands; shared per robot in a process.
import { BehaviorSubject, type Observable } from 'rxjs';
import type { BodyBoard } from '../../src/cortex/bodies.js';

export interface BodyState {
  robot: string;
  /** Metres from the start, x forward at start, y to the left. */
  x: number;
  y: number;
  /** Degrees, counter-clockwise from the start heading, -180..180. */
  heading: number;
  /** Metres travelled in all. */
  distance: number;
  battery_percent: number;
  /** The last command the body carried out. */
  last: string;
  at: number;
}

export interface SimBodyOptions {
  start_battery_percent: number;
  drain_percent_per_minute: number;
}

const wrap = (deg: number) => {
  const d = ((((deg + 180) % 360) + 360) % 360) - 180;
  return Math.round(d * 10) / 10;
};
/** Poses keep a tenth of a millimetre: a walk is many small steps, which centimetres would round away. */
const round = (n: number) => Math.round(n * 10_000) / 10_000;

/**
 * A body without hardware. No timer runs: the battery is computed from the clock when read, so the
 * body has nothing to stop. Move commands change the pose at once; `state$` emits every change.
 */
export class SimBody {
  private readonly startedAt: number;
  private readonly subject: BehaviorSubject<BodyState>;

  constructor(
    readonly robot: string,
    private readonly options: SimBodyOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.startedAt = now();
    this.subject = new BehaviorSubject<BodyState>({
      robot,
      x: 0,
      y: 0,
      heading: 0,
      distance: 0,
      battery_percent: options.start_battery_percent,
      last: 'stand still',
      at: this.startedAt,
    });
  }

  get state$(): Observable<BodyState> {
    return this.subject.asObservable();
  }

  /** The state now (the battery drained to this moment). */
  read(): BodyState {
    const s = this.subject.value;
    const minutes = (this.now() - this.startedAt) / 60_000;
    const battery = Math.max(0, this.options.start_battery_percent - minutes * this.options.drain_percent_per_minute - s.distance * 2);
    return { ...s, battery_percent: Math.round(battery * 10) / 10, at: this.now() };
  }

  /** Moves `metres` along the heading (negative: backwards). */
  walk(metres: number, label: string): BodyState {
    const s = this.read();
    const rad = (s.heading * Math.PI) / 180;
    return this.set({
      ...s,
      x: round(s.x + metres * Math.cos(rad)),
      y: round(s.y + metres * Math.sin(rad)),
      distance: round(s.distance + Math.abs(metres)),
      last: label,
    });
  }

  /** Turns by `degrees` (positive: left). */
  turn(degrees: number, label: string): BodyState {
    const s = this.read();
    return this.set({ ...s, heading: wrap(s.heading + degrees), last: label });
  }

  /** A command that does not move the base (sit, dance, stand still). */
  pose(label: string): BodyState {
    return this.set({ ...this.read(), last: label });
  }

  private set(next: BodyState): BodyState {
    this.subject.next(next);
    return next;
  }
}

/**
 * The simulated body of `robot` on `board`: the move connector and BodyInput of one configuration
 * share it, so the odometry the model reads follows the moves it made. The process's board outlives
 * its agents, so a new agent (a fleet reload) keeps the body, as a real robot keeps its pose. Without a
 * board (a plugin made outside an agent) the body is the caller's alone.
 */
export function simBody(robot: string, options: SimBodyOptions, board: BodyBoard | undefined): SimBody {
  return board ? board.of(robot, () => new SimBody(robot, options)) : new SimBody(robot, options);
}
