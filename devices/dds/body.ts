// A robot body over DDS: its pose and battery from the robot's topics, whether the robot is there, and velocity and stop on the wire
// One body per robot in a process, shared by its owners and counted (sharedDdsBody).
import { BehaviorSubject, type Observable, type Subscription } from 'rxjs';
import type { BodyState } from '../body/sim-body.js';
import { LinkEnd, type OpenableDevice } from '../device-link.js';
import { DdsError } from './addon.js';
import { DdsParticipant, type DdsDomainOptions } from './participant.js';

/** What every DDS body is told. */
export interface DdsBodyOptions extends DdsDomainOptions {
  robot: string;
  /** The robot is lost when its state topic is silent this long (ms). */
  lostAfterMs: number;
}

/**
 * The common part of a DDS body: presence from the state topic (a sample within `lostAfterMs`, and
 * its writer matched), the state every reading updates, and the robot as a device a session actor
 * opens (open = the robot is there; the link closes when it is lost). Subclasses say what the topics
 * are and what goes on the wire.
 */
export abstract class DdsBody {
  readonly participant: DdsParticipant;
  private readonly state: BehaviorSubject<BodyState>;
  readonly present$ = new BehaviorSubject(false);
  /** Why the robot is not there (for `lost the robot: ...`). */
  absence: string;
  private lastSeen = 0;
  private readonly subs: Subscription[] = [];
  private readonly watch: NodeJS.Timeout;
  private users = 0;
  private closed = false;
  private lastPose: { x: number; y: number } | undefined;

  protected constructor(
    protected readonly options: DdsBodyOptions,
    /** The topic whose samples say the robot is there (rt/odom, rt/sportmodestate). */
    readonly stateTopic: string,
  ) {
    this.participant = DdsParticipant.open(options);
    this.absence = `no ${stateTopic} from ${options.robot} yet on DDS domain ${this.participant.domain}`;
    this.state = new BehaviorSubject<BodyState>({
      robot: options.robot,
      x: 0,
      y: 0,
      heading: 0,
      distance: 0,
      battery_percent: Number.NaN,
      last: 'stand still',
      at: Date.now(),
    });
    // Presence is re-judged four times per lost window: a silent robot is lost within 1.25 x lostAfterMs.
    this.watch = setInterval(() => this.judge(), Math.max(50, options.lostAfterMs / 4));
    this.watch.unref();
  }

  /** The robot's state; every reading emits. */
  get state$(): Observable<BodyState> {
    return this.state.asObservable();
  }

  read(): BodyState {
    return { ...this.state.value, at: Date.now() };
  }

  /** Takes a reading of the state topic (any sample means the robot is there). */
  protected seen(): void {
    this.lastSeen = Date.now();
    if (!this.present$.value) this.present$.next(true);
  }

  /** Updates the pose (metres, degrees) and the distance travelled. */
  protected pose(x: number, y: number, headingDeg: number): void {
    const s = this.state.value;
    const step = this.lastPose ? Math.hypot(x - this.lastPose.x, y - this.lastPose.y) : 0;
    this.lastPose = { x, y };
    const r2 = (n: number) => Math.round(n * 100) / 100;
    this.state.next({ ...s, x: r2(x), y: r2(y), heading: Math.round(headingDeg * 10) / 10, distance: r2(s.distance + step), at: Date.now() });
  }

  protected battery(percent: number): void {
    const s = this.state.value;
    if (Math.round(percent * 10) === Math.round(s.battery_percent * 10)) return;
    this.state.next({ ...s, battery_percent: Math.round(percent * 10) / 10, at: Date.now() });
  }

  /** Records what the body was last told (the state's `last`). */
  label(last: string): void {
    this.state.next({ ...this.state.value, last, at: Date.now() });
  }

  protected follow(sub: Subscription): void {
    this.subs.push(sub);
  }

  private judge(): void {
    if (!this.present$.value) return;
    const silent = Date.now() - this.lastSeen;
    if (silent < this.options.lostAfterMs) return;
    this.absence = `no ${this.stateTopic} from ${this.options.robot} for ${Math.round(silent / 100) / 10} s on DDS domain ${this.participant.domain}`;
    this.present$.next(false);
  }

  /** One velocity command on the wire: vx, vy in m/s (x forward, y left), wz in rad/s (positive: counter-clockwise, left). */
  abstract drive(vx: number, vy: number, wz: number): void;
  /** The stop on the wire (zero Twist, StopMove), whatever the body believes. */
  abstract stop(): void;
  /** A named gesture or posture the robot has (stand up, sit, hello); false when it has none of that name. */
  abstract gesture(words: string): boolean;
  /** Lets go of the topics (subclasses close their readers and writers first). */
  protected abstract closeTopics(): void;

  /** The robot as a device a session actor opens: open when it is there, the link closes when it is lost. */
  device(backoff: { initialMs: number; maxMs: number } = { initialMs: 500, maxMs: 5000 }): OpenableDevice {
    return {
      backoff,
      connect: (signal) =>
        new Promise((resolve, reject) => {
          if (this.closed) return reject(new DdsError('dds_failed', `the DDS body of ${this.options.robot} is closed`));
          let sub: Subscription | undefined;
          const onAbort = () => (sub?.unsubscribe(), reject(new DdsError('dds_failed', this.absence)));
          signal.addEventListener('abort', onAbort, { once: true });
          sub = this.present$.subscribe((present) => {
            if (!present) return;
            queueMicrotask(() => sub?.unsubscribe());
            signal.removeEventListener('abort', onAbort);
            const end = new LinkEnd();
            const lost = this.present$.subscribe((p) => {
              if (!p) end.end({ type: 'close', code: 1006, reason: `lost the robot: ${this.absence}` });
            });
            resolve({
              bufferedAmount: () => 0,
              subscribe: (listener) => end.subscribe(listener),
              close: () => {
                lost.unsubscribe();
                end.end({ type: 'close', code: 1000, reason: 'closed' });
              },
            });
          });
        }),
      attach: () => () => undefined,
    };
  }

  /** One more owner (a move connector, a body input). */
  acquire(): this {
    this.users++;
    return this;
  }

  /** An owner lets go; the last one sends the stop, closes the topics and the participant. */
  release(): void {
    if (--this.users > 0 || this.closed) return;
    this.closed = true;
    try {
      this.stop();
    } catch {
      // The participant may already be gone (process teardown): nothing left to stop through.
    }
    clearInterval(this.watch);
    for (const s of this.subs) s.unsubscribe();
    this.closeTopics();
    this.present$.complete();
    this.state.complete();
    this.participant.close();
    bodies.delete(this.key);
  }

  /** The registry key of this body. */
  key = '';
}

const bodies = new Map<string, DdsBody>();

/** The body of `key` in this process (made by `make` the first time), with one more owner. */
export function sharedDdsBody<B extends DdsBody>(key: string, make: () => B): B {
  let body = bodies.get(key) as B | undefined;
  if (!body) {
    body = make();
    body.key = key;
    bodies.set(key, body);
  }
  return body.acquire();
}

/** Heading in degrees from a quaternion's yaw. */
export function yawDegOfQuaternion(q: { x: number; y: number; z: number; w: number }): number {
  const yaw = Math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z));
  return (yaw * 180) / Math.PI;
}
