// A Unitree Go2 or G1 over DDS: motion, stop and gestures by the sport API, the pose and the battery from the robot's state topics
// Topics: rt/api/sport/request (the sport API), rt/sportmodestate (the pose), rt/lowstate's BMS (the battery).
import { DdsBody, type DdsBodyOptions, sharedDdsBody } from '../body.js';
import type { DdsReader, DdsWriter } from '../participant.js';
import { G1_LOCO_API, GO2_SPORT_API } from './msgs.js';

/*
 * The sport API as unitree_sdk2's clients speak it (include/unitree/robot/go2/sport/sport_client.hpp and
 * sport_api.hpp, include/unitree/robot/g1/loco/g1_loco_client.hpp, channel names from
 * include/unitree/robot/channel/channel_namer.hpp): a `unitree_api::msg::dds_::Request_` on
 * rt/api/sport/request whose header names the call (identity.api_id) and a request id, and whose
 * `parameter` is JSON. Go2: Move {"x":vx,"y":vy,"z":vyaw} (api 1008), StopMove (1003). G1: SetVelocity
 * {"velocity":[vx,vy,omega],"duration":s} (7105), StopMove is SetVelocity(0,0,0). The robot answers on
 * rt/api/sport/response; commands here are sent with `noreply` false and not awaited (a stop never
 * waits for an answer). A Move lapses on the robot by itself: a runtime that dies leaves it stopped.
 */

export type UnitreeModel = 'unitree_go2' | 'unitree_g1';

interface Request {
  header: { identity: { id: bigint; api_id: bigint }; lease: { id: bigint }; policy: { priority: number; noreply: boolean } };
  parameter: string;
  binary: Uint8Array;
}
interface SportModeState {
  position: Float32Array;
  imu_state: { rpy: Float32Array };
}
interface LowState {
  bms_state: { soc: number };
}
/** The G1's BMS (unitree_hg BmsState_): its LowState_ carries none. */
interface HgBmsState {
  soc: number;
}

/** Gestures by the words a model uses, per robot: [api id, JSON parameter]. */
const GO2_GESTURES: Array<[RegExp, number]> = [
  [/stand ?up|get up|rise/, GO2_SPORT_API.StandUp],
  [/stand ?down|lie ?down/, GO2_SPORT_API.StandDown],
  [/sit/, GO2_SPORT_API.Sit],
  [/recover/, GO2_SPORT_API.RecoveryStand],
  [/balance/, GO2_SPORT_API.BalanceStand],
  [/hello|wave|greet|shake|paw/, GO2_SPORT_API.Hello],
  [/stretch/, GO2_SPORT_API.Stretch],
  [/dance/, GO2_SPORT_API.Dance1],
  [/heart/, GO2_SPORT_API.Heart],
  [/scrape/, GO2_SPORT_API.Scrape],
];
const G1_GESTURES: Array<[RegExp, number, string]> = [
  [/stand ?up|get up|rise/, G1_LOCO_API.SetFsmId, '{"data":4}'],
  [/sit/, G1_LOCO_API.SetFsmId, '{"data":3}'],
  [/squat|crouch/, G1_LOCO_API.SetFsmId, '{"data":2}'],
  [/hello|wave|greet/, G1_LOCO_API.SetTaskId, '{"data":0}'],
  [/shake/, G1_LOCO_API.SetTaskId, '{"data":2}'],
];

const fixed = (n: number) => Math.round(n * 1000) / 1000;

export class UnitreeSport extends DdsBody {
  private readonly request: DdsWriter<Request>;
  private readonly sportState: DdsReader<SportModeState>;
  /** The battery: a Go2's rt/lowstate (bms_state.soc), a G1's rt/lf/bmsstate (soc). */
  private readonly batteryState: DdsReader<LowState> | DdsReader<HgBmsState>;
  private seq = 0;

  constructor(
    options: DdsBodyOptions,
    readonly model: UnitreeModel,
    topics: { state: string; lowstate: string; bms: string },
  ) {
    super(options, topics.state);
    this.request = this.participant.writer<Request>('rt/api/sport/request', 'unitree_api/msg/Request_');
    this.sportState = this.participant.reader<SportModeState>(topics.state, 'unitree_go/msg/SportModeState_');
    if (model === 'unitree_g1') {
      const bms = this.participant.reader<HgBmsState>(topics.bms, 'unitree_hg/msg/BmsState_');
      this.batteryState = bms;
      this.follow(bms.messages$.subscribe((b) => this.battery(b.soc)));
    } else {
      const low = this.participant.reader<LowState>(topics.lowstate, 'unitree_go/msg/LowState_');
      this.batteryState = low;
      this.follow(low.messages$.subscribe((l) => this.battery(l.bms_state.soc)));
    }
    this.follow(
      this.sportState.messages$.subscribe((s) => {
        this.seen();
        this.pose(s.position[0] ?? 0, s.position[1] ?? 0, ((s.imu_state.rpy[2] ?? 0) * 180) / Math.PI);
      }),
    );
  }

  /** Sends one sport API call. */
  call(apiId: number, parameter = ''): void {
    // unitree_sdk2 numbers requests by time; ours are time in µs plus a sequence, unique per process.
    const id = BigInt(Date.now()) * 1000n + BigInt(this.seq++ % 1000);
    this.request.publish({
      header: { identity: { id, api_id: BigInt(apiId) }, lease: { id: 0n }, policy: { priority: 0, noreply: false } },
      parameter,
      binary: new Uint8Array(0),
    });
  }

  drive(vx: number, vy: number, wz: number): void {
    if (this.model === 'unitree_g1') this.call(G1_LOCO_API.SetVelocity, JSON.stringify({ velocity: [fixed(vx), fixed(vy), fixed(wz)], duration: 1 }));
    else this.call(GO2_SPORT_API.Move, JSON.stringify({ x: fixed(vx), y: fixed(vy), z: fixed(wz) }));
  }

  stop(): void {
    if (this.model === 'unitree_g1') this.call(G1_LOCO_API.SetVelocity, JSON.stringify({ velocity: [0, 0, 0], duration: 1 }));
    else this.call(GO2_SPORT_API.StopMove);
  }

  gesture(words: string): boolean {
    if (this.model === 'unitree_g1') {
      const hit = G1_GESTURES.find(([re]) => re.test(words));
      if (hit) this.call(hit[1], hit[2]);
      return Boolean(hit);
    }
    const hit = GO2_GESTURES.find(([re]) => re.test(words));
    if (hit) this.call(hit[1]);
    return Boolean(hit);
  }

  protected closeTopics(): void {
    this.sportState.close();
    this.batteryState.close();
    this.request.close();
  }
}

/** The Unitree body of `robot` in this process. */
export function unitreeSport(options: DdsBodyOptions, model: UnitreeModel, topics: { state: string; lowstate: string; bms: string }): UnitreeSport {
  return sharedDdsBody(`unitree|${options.robot}|${options.domain ?? ''}|${options.networkInterface ?? ''}`, () => new UnitreeSport(options, model, topics));
}
