// The `nav2` connector of navigate_location: goes to a named place (the simulated body drives there; a robot gets a Nav2 goal over DDS).
import { randomBytes } from 'node:crypto';
import { CortexError, describeError } from '../../../src/errors.js';
import { abortableSleep } from '../../../src/cloud/retry.js';
import type { ActionConnector, ActionContext, ConnectorFactory } from '../../../src/cortex/action.js';
import { NavigateConnectorOptions } from '../../../src/plugins/schemas/navigate.js';
import { simBody } from '../../../devices/body/sim-body.js';
import { DdsParticipant, type DdsReader, type DdsWriter } from '../../../devices/dds/participant.js';
import { ddsTopic } from '../../../devices/dds/ros2/base.js';
import { whenMatched } from '../../../devices/dds/matched.js';
import { MATCH_WAIT_MS } from './ros2-topic.js';

/** A place on the map: metres, heading in degrees counter-clockwise (0: the map's x axis). */
export interface Place {
  name: string;
  x: number;
  y: number;
  heading: number;
}

/** The QoS of an action's status topic as rcl_action offers it (rmw_qos_profile_action_status_default). */
const ACTION_STATUS_QOS = { reliable: true, depth: 1, transientLocal: true } as const;

/** Nav2's action status codes (action_msgs/GoalStatus). */
export const GOAL_STATUS: Record<number, string> = { 0: 'UNKNOWN', 1: 'ACCEPTED', 2: 'EXECUTING', 3: 'CANCELING', 4: 'SUCCEEDED', 5: 'CANCELED', 6: 'ABORTED' };

/** The return codes of Nav2's cancel service (action_msgs/srv/CancelGoal). */
export const CANCEL_RETURN: Record<number, string> = { 0: 'ERROR_NONE', 1: 'ERROR_REJECTED', 2: 'ERROR_UNKNOWN_GOAL_ID', 3: 'ERROR_GOAL_TERMINATED' };

/** How long halt waits for Nav2's answer to its cancel request. */
export const CANCEL_WAIT_MS = 1000;

/** The action a status topic belongs to: `/navigate_to_pose/_action/status` -> `navigate_to_pose`. */
export function actionOf(statusTopic: string): string {
  return statusTopic
    .replace(/^rt\//, '')
    .replace(/^\/+/, '')
    .replace(/\/_action\/status$/, '');
}

interface CancelReply {
  client_guid: bigint;
  sequence_number: bigint;
  return_code: number;
  goals_canceling: unknown[];
}

/** Phrases a model puts before a place's name ("go to the kitchen"): taken off, as OM1's navigation connector does. */
const PREFIXES = ['go to the ', 'go to ', 'navigate to the ', 'navigate to ', 'move to the ', 'move to ', 'take me to the ', 'take me to '];

/** A place's key: trimmed, lower case, without a leading "go to the". */
export function placeKey(label: string): string {
  let key = label.trim().toLowerCase();
  for (const p of PREFIXES)
    if (key.startsWith(p)) {
      key = key.slice(p.length).trim();
      break;
    }
  return key;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const obj = (v: unknown): Record<string, unknown> => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** Yaw of a quaternion, degrees counter-clockwise. */
export function yawDeg(q: { x?: unknown; y?: unknown; z?: unknown; w?: unknown }): number {
  const [x, y, z, w] = [num(q.x), num(q.y), num(q.z), q.w === undefined ? 1 : num(q.w)];
  return (Math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z)) * 180) / Math.PI;
}

/**
 * A map server's list of places: `{name: {name?, pose: {position, orientation}}}`, or a list of
 * `{name|label, pose}`, either possibly as a JSON string in `{message}` (the shapes OM1's locations
 * provider reads). An entry without a pose is at the origin, as OM1 takes it.
 */
export function parsePlaces(body: unknown): Place[] {
  let data = body;
  const message = obj(body).message;
  if (typeof message === 'string') {
    try {
      data = JSON.parse(message);
    } catch (err) {
      throw new CortexError('navigate_places', `the map server's message is not JSON: ${describeError(err)}`);
    }
  } else if (message !== undefined) throw new CortexError('navigate_places', "the map server's list has a `message` that is not a JSON string");
  const one = (name: string, entry: Record<string, unknown>): Place => {
    const pose = obj(entry.pose);
    const position = obj(pose.position);
    return { name, x: num(position.x), y: num(position.y), heading: yawDeg(obj(pose.orientation)) };
  };
  if (Array.isArray(data))
    return data.flatMap((e) => {
      const name = String(obj(e).name ?? obj(e).label ?? '').trim();
      return name ? [one(name, obj(e))] : [];
    });
  if (typeof data === 'object' && data !== null) return Object.entries(data).map(([k, v]) => one(String(obj(v).name ?? k), obj(v)));
  throw new CortexError('navigate_places', `the map server's list is ${typeof data}, not places by name`);
}

/** Sets `navigation_status`, `navigating` and the goal's name in the mode's context. */
type StatusOf = (status: string, navigating: boolean, place?: string) => void;
/** The place a label names (the file's list, then the map server's); fails with the known names. */
type FindPlace = (label: string, signal: AbortSignal) => Promise<Place>;

/**
 * The connector. A command names a place; an unknown one fails with the known names (the model is told).
 * `sim`: the simulated body turns toward the place, drives there over distance / sim_speed_mps (at most
 * 10 s; a halt or a newer command stops it where it is) and turns to the place's heading.
 * `ros2`/`unitree_dds`: one PoseStamped goal on goal_topic (waiting for Nav2's subscriber as ros2_publish
 * does); the goal's action status topic sets `navigation_status` and `navigating` as it changes. A halt
 * calls the action's cancel service over DDS as an rmw_cyclonedds client does (every goal: a zero goal
 * id and stamp) and says whether Nav2 accepted within CANCEL_WAIT_MS.
 */
export const createNav2Connector: ConnectorFactory = (raw, ctx): ActionConnector => {
  const o = NavigateConnectorOptions.parse(raw ?? {});
  const find = placeFinder(o, ctx);
  const status: StatusOf = (s, navigating, place) => ctx.publishContext?.({ navigation_status: s, navigating, ...(place ? { navigation_goal: place } : {}) });
  return o.binding === 'sim' ? simNavigator(o, ctx, find, status) : nav2Navigator(o, ctx, find, status);
};

/** Finds places in the file's list and the map server's (fetched again after refresh_seconds; its last list kept while it does not answer). */
function placeFinder(o: NavigateConnectorOptions, ctx: ActionContext): FindPlace {
  let fetched: { at: number; places: Place[] } | undefined;
  const own = Object.entries(o.locations).map(([name, p]) => ({ name, x: p.x, y: p.y, heading: p.heading }));
  const places = async (signal: AbortSignal): Promise<Place[]> => {
    if (!o.locations_url) return own;
    if (!fetched || Date.now() - fetched.at > o.refresh_seconds * 1000) {
      let res: Response;
      try {
        res = await fetch(o.locations_url, { signal: AbortSignal.any([signal, AbortSignal.timeout(o.timeout_seconds * 1000)]) });
      } catch (err) {
        if (fetched) ctx.logger.warn({ url: o.locations_url }, `the map server did not answer (${describeError(err)}); its last list is used`);
        else throw new CortexError('navigate_places', `the map server at ${o.locations_url} did not answer: ${describeError(err)}`);
        return [...own, ...fetched.places];
      }
      if (!res.ok) throw new CortexError('navigate_places', `the map server at ${o.locations_url} answered ${res.status}`);
      fetched = { at: Date.now(), places: parsePlaces(await res.json()) };
    }
    return [...own, ...fetched.places];
  };
  return async (label, signal) => {
    const key = placeKey(label);
    const all = await places(signal);
    const place = all.find((p) => p.name.trim().toLowerCase() === key);
    if (!place)
      throw new CortexError(
        'navigate_unknown_place',
        `no place "${key}" on the map${all.length ? `; known places: ${all.map((p) => p.name).join(', ')}` : ' (no places are known)'}`,
      );
    return place;
  };
}

const locationOf = (value: unknown): string => String((value as { location?: unknown })?.location ?? '');

/** `sim`: the simulated body turns toward the place, drives there in 100 ms steps and turns to its heading. */
function simNavigator(o: NavigateConnectorOptions, ctx: ActionContext, find: FindPlace, status: StatusOf): ActionConnector {
  const body = simBody(o.robot, { start_battery_percent: 100, drain_percent_per_minute: 0.5 }, ctx.bodies);
  return {
    name: 'nav2',
    async run(value, signal) {
      signal.throwIfAborted();
      const place = await find(locationOf(value), signal);
      let s = body.read();
      const dx = place.x - s.x;
      const dy = place.y - s.y;
      const distance = Math.hypot(dx, dy);
      status('EXECUTING', true, place.name);
      try {
        if (distance > 0.001) {
          body.turn((Math.atan2(dy, dx) * 180) / Math.PI - s.heading, `navigate to ${place.name}`);
          const ms = Math.min(10_000, (distance / o.sim_speed_mps) * 1000);
          const steps = Math.max(1, Math.round(ms / 100));
          for (let i = 0; i < steps; i++) {
            await abortableSleep(ms / steps, signal);
            body.walk(distance / steps, `navigate to ${place.name}`);
          }
        }
        s = body.read();
        s = body.turn(place.heading - s.heading, `arrived at ${place.name}`);
      } catch (err) {
        status('CANCELED', false, place.name);
        throw err;
      }
      status('SUCCEEDED', false, place.name);
      ctx.write(`[${o.robot}] at ${place.name}: x ${s.x} m, y ${s.y} m, heading ${s.heading} deg`);
    },
    async stop() {},
    async halt() {
      body.pose('stand still');
    },
  };
}

/** A robot: Nav2's goal topic, its status topic and its cancel service over DDS (the addon is loaded when the participant opens). */
function nav2Navigator(o: NavigateConnectorOptions, ctx: ActionContext, find: FindPlace, status: StatusOf): ActionConnector {
  const participant = DdsParticipant.open({ domain: o.domain_id, networkInterface: o.network_interface });
  const untap = ctx.media?.dds ? participant.tap(ctx.media) : undefined;
  const writer = participant.writer<unknown>(ddsTopic(o.goal_topic), 'geometry_msgs/msg/PoseStamped', { reliable: true, depth: 1 });
  // rcl_action's status QoS (reliable, keep last 1, transient local): the server's latest status reaches a reader that matched after it
  // was written, so a goal's EXECUTING is not lost when discovery of the status topic ends after the goal topic's.
  const reader = participant.reader<{ status_list: Array<{ status: number }> }>(ddsTopic(o.status_topic), 'action_msgs/msg/GoalStatusArray', ACTION_STATUS_QOS);
  const where = `${o.goal_topic} (geometry_msgs/PoseStamped) on DDS domain ${participant.domain}`;
  const cancel = cancelClient(participant, actionOf(o.status_topic), ctx);
  let goal: string | undefined;
  let last: string | undefined;
  const sub = reader.messages$.subscribe((m) => {
    const code = m.status_list.at(-1)?.status;
    // Before this connector sent a goal, a status (kept by the server from an earlier client) is not ours to report.
    if (code === undefined || goal === undefined) return;
    const s = GOAL_STATUS[code] ?? 'UNKNOWN';
    if (s === last) return;
    last = s;
    status(s, code === 1 || code === 2, goal);
    ctx.write(`[navigate] ${goal ?? 'goal'}: ${s}`);
  });
  return {
    name: 'nav2',
    async run(value, signal) {
      signal.throwIfAborted();
      const place = await find(locationOf(value), signal);
      if (!(await whenMatched(writer.matched$, MATCH_WAIT_MS, signal)))
        throw new CortexError('navigate_no_subscriber', `no subscriber of ${where} within ${MATCH_WAIT_MS / 1000} s (is Nav2 running?); no goal was sent`);
      const now = Date.now();
      const half = (place.heading * Math.PI) / 360;
      writer.publish({
        header: { stamp: { sec: Math.floor(now / 1000), nanosec: (now % 1000) * 1_000_000 }, frame_id: o.frame_id },
        pose: { position: { x: place.x, y: place.y, z: 0 }, orientation: { x: 0, y: 0, z: Math.sin(half), w: Math.cos(half) } },
      });
      goal = place.name;
      last = undefined;
      status('SENT', true, place.name);
      ctx.write(`[navigate] goal ${place.name}: x ${place.x} m, y ${place.y} m, heading ${Math.round(place.heading)} deg on ${o.goal_topic}`);
    },
    async halt() {
      if (!goal || last === 'SUCCEEDED' || last === 'CANCELED' || last === 'ABORTED') return;
      await cancel.cancelAll(goal);
    },
    async stop() {
      sub.unsubscribe();
      cancel.close();
      reader.close();
      writer.close();
      untap?.();
      participant.close();
    },
  };
}

/** A client of an action's cancel service, as rmw_cyclonedds names its topics (reliable, keep last 10: ROS 2's service QoS). */
function cancelClient(participant: DdsParticipant, action: string, ctx: ActionContext) {
  const service = `/${action}/_action/cancel_goal`;
  const requests: DdsWriter<unknown> = participant.writer<unknown>(`rq/${action}/_action/cancel_goalRequest`, 'action_msgs/srv/CancelGoal_Request', {
    reliable: true,
    depth: 10,
  });
  const replies: DdsReader<CancelReply> = participant.reader<CancelReply>(`rr/${action}/_action/cancel_goalReply`, 'action_msgs/srv/CancelGoal_Response', {
    reliable: true,
    depth: 10,
  });
  // This client's id in rmw_cyclonedds's request header: Nav2's reply carries it back with the sequence number.
  const clientGuid = BigInt.asUintN(64, BigInt(`0x${randomBytes(8).toString('hex')}`));
  let sequence = 0n;

  /** The reply to request `seq`, or undefined at the deadline. */
  const replyTo = (seq: bigint, deadline: number) =>
    new Promise<CancelReply | undefined>((resolve) => {
      const timer = setTimeout(() => (s.unsubscribe(), resolve(undefined)), Math.max(0, deadline - Date.now()));
      const s = replies.messages$.subscribe((r) => {
        if (r.client_guid !== clientGuid || r.sequence_number !== seq) return;
        clearTimeout(timer);
        s.unsubscribe();
        resolve(r);
      });
    });

  return {
    /**
     * Cancels every goal Nav2 drives (a zero goal id and stamp), waits at most CANCEL_WAIT_MS for the
     * answer and says on the terminal whether Nav2 accepted it. Resolves in every case: no answer is
     * said as such, never taken for a cancel.
     */
    async cancelAll(name: string): Promise<void> {
      const seq = ++sequence;
      const deadline = Date.now() + CANCEL_WAIT_MS;
      // A cancel service not matched yet (discovery still under way) would lose the request: wait for it within the same budget.
      await whenMatched(requests.matched$, deadline - Date.now());
      const reply = replyTo(seq, deadline);
      try {
        requests.publish({ client_guid: clientGuid, sequence_number: seq, goal_info: {} });
      } catch (err) {
        ctx.logger.error({ goal: name, err: describeError(err) }, `halt: the cancel request to ${service} could not be sent`);
      }
      const r = await reply;
      if (!r) {
        const why = requests.matched$.value === 0 ? 'no cancel service is there' : 'it did not answer';
        ctx.logger.error({ goal: name, service }, `halt: Nav2 did not answer the cancel of ${name} within ${CANCEL_WAIT_MS} ms (${why})`);
        ctx.write(
          `[navigate] halt: NO ANSWER from Nav2's ${service} within ${CANCEL_WAIT_MS / 1000} s (${why}): the goal ${name} may still be driven; stop the robot on its own controls`,
        );
        return;
      }
      const code = CANCEL_RETURN[r.return_code] ?? `code ${r.return_code}`;
      if (r.return_code === 0) {
        ctx.write(`[navigate] halt: Nav2 accepted the cancel of ${name} (${code}; ${r.goals_canceling.length} goal(s) canceling)`);
        return;
      }
      ctx.logger.error({ goal: name, return_code: r.return_code }, `halt: Nav2 refused the cancel of ${name} (${code})`);
      ctx.write(`[navigate] halt: Nav2 did NOT accept the cancel of ${name} (${code}); stop the robot on its own controls`);
    },
    close(): void {
      replies.close();
      requests.close();
    },
  };
}
