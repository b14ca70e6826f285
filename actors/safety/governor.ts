// The safety governor (`safety`): the statechart between every motion action and its connector: limits, dead-man timer, health, geofence, latched e-stop.
import type { Logger } from 'pino';
import { assign, enqueueActions, fromCallback, setup, type AnyActorRef, type EventObject } from 'xstate';
import type { AgentBus, AgentEvent } from '../../src/cortex/events.js';
import { outsideFence, positionOf, type Position } from '../../src/safety/geofence.js';
import {
  decide,
  keepGrants,
  motionValue,
  policyOf,
  type Facts,
  type Latch,
  type ModePolicy,
  type SafetyCause,
  type SafetyPolicy,
} from '../../src/safety/policy.js';
import type { EstopGate } from './estop-gate.js';
import { ActorServices } from '../actor-services.js';
import { estopSerialLogic, type HoldSerialSession } from './estop-serial.js';
import { streamSessionLogic } from '../streams/session-machine.js';
import { estopSocketLogic, type EstopSocketOptions } from './estop-socket.js';
import { lidarWatchLogic, type HoldLidarSession, type ObstaclesChanged } from './obstacle-watch.js';
import { travelOf, type Travel } from '../../src/safety/obstacle.js';
import { SPEED_LIMIT_KEY, SpeedLimit, type ObstacleView } from '../../src/safety/obstacle-view.js';
import type { LidarConfig } from '../../src/config/lidar.js';
import { BodyBoard } from '../../src/cortex/bodies.js';

import { initialStatus, type ReleaseAnswer } from './status.js';

export type { SafetyStatus } from './status.js';

export interface GovernorInput {
  policy: SafetyPolicy;
  bus: AgentBus;
  logger: Logger;
  /** The agent's clock (rate windows, rests); the delays run on the actor system's clock, the same one. */
  now: () => number;
  /** The mode the agent starts in. */
  mode: string;
  /** A latch found on disk at start (the e-stop survives a restart). */
  latch?: Latch | null;
  /** Saves the latch (null when released); called after the stop commands were sent. */
  persist?: (latch: Latch | null) => void;
  /** The local e-stop socket (`cortexd estop`); absent: none. */
  socket?: EstopSocketOptions;
  /** The latch the socket's thread sets, checked before every motion command: required with `socket`. */
  gate?: EstopGate;
  /** The robot's lidar (the configuration's `lidar` block): the governor holds its session, `device:lidar`. */
  lidar?: LidarConfig;
  /** The obstacle guard's view (`safety.obstacle`), asked before every motion command. */
  obstacles?: ObstacleView;
  /** The robot's things in this process (the simulated body the simulated lidar looks from, the speed limit). */
  board?: BodyBoard;
  /** A recording or live Foxglove view: the lidar's scans go to it. */
  media?: import('../../src/cortex/input.js').MediaTap;
}

/** A motion command asking to reach its connector; answered `safety.granted` or `safety.refused` to `replyTo`. */
export interface SafetyRequest {
  type: 'safety.request';
  id: number;
  mode: string;
  label: string;
  value: unknown;
  origin: string;
  replyTo: AnyActorRef;
}

export type GovernorEvent =
  | SafetyRequest
  | { type: 'safety.register'; key: string; ref: AnyActorRef }
  | { type: 'safety.unregister'; key: string }
  | { type: 'safety.estop'; reason: string; source: string }
  /** Answered by the emitted `safety.release.answer` with the same `id` (status.ts `askRelease`). */
  | { type: 'safety.release'; source: string; id?: string }
  | { type: 'safety.stopping'; reason: string }
  | { type: 'safety.context'; values: Record<string, unknown> }
  | { type: 'safety.bus'; event: AgentEvent }
  | HoldSerialSession
  | HoldLidarSession
  | ObstaclesChanged
  | { type: 'motion.fed' }
  | { type: 'motion.ended' }
  | { type: 'model.started' }
  | { type: 'model.progress' }
  | { type: 'model.ended' };

interface Motion {
  since: number;
  value: string;
  label: string;
  mode: string;
}

/** The governor's data; its services (bus, logger, clock, persist, the socket's gate) are its input, kept by its logic (`ActorServices`). */
interface GovernorContext {
  policy: SafetyPolicy;
  mode: string;
  /** Motion actions running now, by actor session id: where halts go. */
  actions: Record<string, AnyActorRef>;
  latch: Latch | null;
  stopping: string | null;
  restingUntil: number;
  faults: Record<string, string>;
  position: Position | null;
  grants: number[];
  /** The longest rate window of any mode: how long grants are kept. */
  windowMs: number;
  /** What moves now (granted and not stopped since), or null when the robot is still. */
  motion: Motion | null;
  /** The travels the obstacle guard refuses now, and why (changes only when the set changes). */
  blocked: Partial<Record<Travel, string>>;
}

/** Events of the bus the governor follows (a callback child subscribes; its own `safety` events are not among them). */
const followed = (e: AgentEvent) =>
  e.type === 'prompt' || e.type === 'model' || e.type.startsWith('model.') || e.type === 'stream' || e.type === 'mode.changed' || e.type === 'agent.started';

const seconds = (ms: number) => `${Math.round(ms / 100) / 10} s`;
const pol = (c: GovernorContext, mode?: string): ModePolicy => policyOf(c.policy, mode ?? c.motion?.mode ?? c.mode);

function factsOf(c: GovernorContext): Facts {
  return { latch: c.latch, stopping: c.stopping, restingUntil: c.restingUntil, faults: c.faults, position: c.position, grants: c.grants };
}

function announce(s: GovernorInput, event: Omit<Extract<AgentEvent, { type: 'safety' }>, 'type' | 'at'>): void {
  s.bus.emit({ type: 'safety', at: Date.now(), ...event });
}

/* eslint-disable @typescript-eslint/no-explicit-any */
/** The parts of enqueueActions' `enqueue` the helpers use (its generic type is not worth spelling out). */
type Enqueue = {
  (fn: () => void): void;
  sendTo: (to: any, event: any) => void;
  assign: (a: any) => void;
  raise: (e: any) => void;
  emit: (e: ReleaseAnswer) => void;
};
/* eslint-enable @typescript-eslint/no-explicit-any */

/**
 * Sends the stop to every motion action (each interrupts what runs, drops its queue and calls its
 * connector's halt) and says why on the bus and in the journal. Only when something moves, unless
 * `force` (e-stop, stopping: the stop command goes out whatever the governor believes).
 */
function halt(enqueue: Enqueue, s: GovernorInput, c: GovernorContext, cause: SafetyCause, reason: string, force = false, first?: () => void): void {
  if (!force && !c.motion) return;
  const refs = Object.values(c.actions);
  // Nothing to stop (no motion action runs, nothing moves): only what `first` says is said.
  if (refs.length === 0 && !c.motion) {
    if (first) enqueue(first);
    return;
  }
  // Sent directly, before anything is logged or announced: the stop command is the first thing that happens.
  enqueue(() => {
    for (const ref of refs) ref.send({ type: 'safety.halt', reason });
  });
  enqueue.assign({ motion: null });
  enqueue.raise({ type: 'motion.ended' });
  enqueue(() => {
    first?.();
    s.logger.warn({ safety: 'stop', cause, mode: c.mode }, `safety: stop sent (${cause}): ${reason}`);
    announce(s, { kind: 'stop', cause, reason, ...(c.motion ? { mode: c.motion.mode, label: c.motion.label, value: c.motion.value } : {}) });
  });
}

/** Sets or clears a health fault; a new fault stops motion (stop_on_service_loss). */
function fault(enqueue: Enqueue, s: GovernorInput, c: GovernorContext, key: string, reason: string | null, cause: SafetyCause = 'service'): void {
  if (reason === null) {
    if (key in c.faults) {
      const { [key]: _gone, ...rest } = c.faults;
      enqueue.assign({ faults: rest });
    }
    return;
  }
  if (c.faults[key] === reason) return;
  enqueue.assign({ faults: { ...c.faults, [key]: reason } });
  halt(enqueue, s, c, cause, `${key}: ${reason}`);
}

/**
 * The fields of a followed bus event that the governor reads: a prompt or an answer is only "the
 * model was asked / answered", so its text (what the robot heard, secrets, media) never becomes an
 * event of the governor, where `--inspect` would show it.
 */
function slim(e: AgentEvent): AgentEvent {
  switch (e.type) {
    case 'prompt':
      return { type: 'prompt', at: e.at, mode: e.mode, tick: e.tick, prompt: '' };
    case 'model.answer':
      return { type: 'model.answer', at: e.at, mode: e.mode, tick: e.tick, model: e.model, tool_calls: [], latency_ms: e.latency_ms };
    default:
      return e;
  }
}

/** Relays the followed bus events to the governor. */
const busWatch = fromCallback<EventObject, { bus: AgentBus }>(({ input, sendBack }) => {
  const sub = input.bus.events$.subscribe((event) => {
    if (followed(event)) sendBack({ type: 'safety.bus', event: slim(event) });
  });
  return () => sub.unsubscribe();
});

/**
 * The governor. Four parallel regions: `estop` (released / latched), `motion` (still / moving with
 * the dead-man timer restarted by every granted command and the longest-continuous timer / resting),
 * `model` (idle / waiting for an answer / stalled) and `agent` (running / stopping). Every decision
 * on a command is `decide()` of src/safety/policy.ts over the context; the regions own the timers.
 * It depends on no model, service or input: its children are the bus watcher, the e-stop sources
 * (serial sentence, local socket) and the serial e-stop line's session (`device:serial`), and each
 * failing source is reported without stopping the rest.
 */
// long: one statechart, its setup() table (where XState types the actions against its context and events) and its four regions; each decision is decide() of src/safety/policy.ts.
export function governorLogic() {
  const services = new ActorServices<GovernorInput>();
  /** The services of governor `self`: its input. */
  const svc = (self: AnyActorRef) => services.of(self);
  return setup({
    types: { context: {} as GovernorContext, events: {} as GovernorEvent, input: {} as GovernorInput, emitted: {} as ReleaseAnswer },
    actors: { busWatch, estopSerial: estopSerialLogic, estopSocket: estopSocketLogic, lidarWatch: lidarWatchLogic, deviceSession: streamSessionLogic() },
    delays: {
      deadman: ({ context }) => pol(context).deadmanMs,
      maxContinuous: ({ context }) => pol(context).maxContinuousMs,
      rest: ({ context }) => pol(context).restMs,
      modelStall: ({ context }) => pol(context, context.mode).modelStallMs,
    },
    guards: {
      restoredLatch: ({ context }) => context.latch !== null,
    },
    actions: {
      decideRequest: enqueueActions(({ context: c, event, enqueue, self }) => {
        const s = svc(self);
        if (event.type !== 'safety.request') return;
        // The e-stop socket's thread may have latched since the main thread last ran: that latch is
        // taken here, before anything is decided, so the command is refused and the governor latches.
        const socketLatch = s.gate?.take();
        if (socketLatch) {
          const reason = `emergency stop latched (socket: ${socketLatch.reason})`;
          enqueue.sendTo(event.replyTo, { type: 'safety.refused', id: event.id, reason });
          enqueue.raise({ type: 'safety.estop', source: 'socket', reason: socketLatch.reason });
          enqueue(() => announce(s, { kind: 'refused', cause: 'estop', reason, mode: event.mode, label: event.label, value: motionValue(event.value) }));
          return;
        }
        const now = s.now();
        const d = decide(pol(c, event.mode), factsOf(c), event, now);
        if (!d.ok) {
          enqueue.sendTo(event.replyTo, { type: 'safety.refused', id: event.id, reason: d.reason });
          enqueue(() => {
            s.logger.info(
              { safety: 'refused', cause: d.cause, mode: event.mode, action: event.label },
              `safety: ${event.label} "${d.value}" refused: ${d.reason}`,
            );
            announce(s, { kind: 'refused', cause: d.cause, reason: d.reason, mode: event.mode, label: event.label, value: d.value });
          });
          return;
        }
        // The obstacle guard, after every other limit: the stop value and motions that move no base pass.
        const seen = !d.stop && s.obstacles ? s.obstacles.verdict(travelOf(d.value)) : null;
        if (seen && !seen.ok) {
          enqueue.sendTo(event.replyTo, { type: 'safety.refused', id: event.id, reason: seen.reason });
          enqueue(() => {
            s.logger.info(
              { safety: 'refused', cause: 'obstacle', mode: event.mode, action: event.label },
              `safety: ${event.label} "${d.value}" refused: ${seen.reason}`,
            );
            announce(s, { kind: 'refused', cause: 'obstacle', reason: seen.reason, mode: event.mode, label: event.label, value: d.value });
          });
          return;
        }
        if (d.stop) {
          enqueue.assign({ motion: null });
          enqueue.raise({ type: 'motion.ended' });
        } else {
          enqueue.assign({
            grants: [...keepGrants(c.grants, now, c.windowMs), now],
            motion: { since: c.motion?.since ?? now, value: d.value, label: event.label, mode: event.mode },
          });
          enqueue.raise({ type: 'motion.fed' });
          // The granting mode's velocity caps, in place before the command reaches its connector (which caps what it sends).
          const p = pol(c, event.mode);
          enqueue(() => {
            const cap = s.board?.of(SPEED_LIMIT_KEY, () => new SpeedLimit());
            if (!cap) return;
            cap.maxLinearMps = p.maxLinearMps ?? Number.POSITIVE_INFINITY;
            cap.maxAngularDps = p.maxAngularDps ?? Number.POSITIVE_INFINITY;
          });
        }
        enqueue.sendTo(event.replyTo, { type: 'safety.granted', id: event.id });
      }),
      register: enqueueActions(({ context: c, event, enqueue }) => {
        if (event.type !== 'safety.register') return;
        enqueue.assign({ actions: { ...c.actions, [event.key]: event.ref } });
        // A motion action that starts while the e-stop is latched (a restart after a crash) is stopped at once.
        if (c.latch) enqueue.sendTo(event.ref, { type: 'safety.halt', reason: `emergency stop latched (${c.latch.source}: ${c.latch.reason})` });
      }),
      unregister: assign(({ context, event }) => {
        if (event.type !== 'safety.unregister') return {};
        const { [event.key]: _gone, ...actions } = context.actions;
        return { actions };
      }),
      latch: enqueueActions(({ context: c, event, enqueue, self }) => {
        const s = svc(self);
        if (event.type !== 'safety.estop') return;
        const latch: Latch = { source: event.source, reason: event.reason, at: Date.now() };
        enqueue.assign({ latch });
        halt(enqueue, s, c, 'estop', `emergency stop (${latch.source}): ${latch.reason}`, true, () => {
          s.logger.error({ safety: 'estop', source: latch.source, mode: c.mode }, `EMERGENCY STOP latched by ${latch.source}: ${latch.reason}`);
          announce(s, { kind: 'estop', source: latch.source, reason: latch.reason });
        });
        enqueue(() => s.persist?.(latch));
      }),
      // Pressed again while latched: the stop goes out again, the first latch (and its reason) stays.
      relatch: enqueueActions(({ context: c, event, enqueue, self }) => {
        const s = svc(self);
        if (event.type !== 'safety.estop' || !c.latch) return;
        halt(enqueue, s, c, 'estop', `emergency stop (${event.source}): ${event.reason}`, true);
      }),
      release: enqueueActions(({ context: c, event, enqueue, self }) => {
        const s = svc(self);
        if (event.type !== 'safety.release') return;
        const was = c.latch;
        enqueue.assign({ latch: null });
        if (event.id !== undefined) enqueue.emit({ type: 'safety.release.answer', id: event.id, ok: true });
        enqueue(() => {
          s.logger.warn(
            { safety: 'release', source: event.source, mode: c.mode },
            `emergency stop released by ${event.source}${was ? ` (was: ${was.source}: ${was.reason})` : ''}`,
          );
          announce(s, { kind: 'release', source: event.source, reason: was ? `released (was ${was.source}: ${was.reason})` : 'released' });
          s.persist?.(null);
        });
      }),
      // Nothing is latched: the release is refused, and its asker told why.
      refuseRelease: enqueueActions(({ event, enqueue }) => {
        if (event.type !== 'safety.release' || event.id === undefined) return;
        enqueue.emit({ type: 'safety.release.answer', id: event.id, ok: false, reason: 'no emergency stop is latched' });
      }),
      announceRestored: ({ context: c, self }) => {
        if (!c.latch) return;
        const s = svc(self);
        s.logger.error(
          { safety: 'estop', source: c.latch.source, mode: c.mode },
          `EMERGENCY STOP still latched from before the restart (${c.latch.source}: ${c.latch.reason})`,
        );
        announce(s, { kind: 'estop', source: c.latch.source, reason: c.latch.reason, restored: true });
      },
      stopping: enqueueActions(({ context: c, event, enqueue, self }) => {
        const s = svc(self);
        if (event.type !== 'safety.stopping') return;
        enqueue.assign({ stopping: event.reason });
        halt(enqueue, s, c, 'stopping', `the agent is stopping (${event.reason})`, true);
      }),
      deadmanExpired: enqueueActions(({ context: c, enqueue, self }) => {
        const s = svc(self);
        halt(enqueue, s, c, 'deadman', `dead-man timer: no motion command for ${seconds(pol(c).deadmanMs)}`);
      }),
      maxContinuousExpired: enqueueActions(({ context: c, enqueue, self }) => {
        const s = svc(self);
        const p = pol(c);
        halt(enqueue, s, c, 'max_continuous', `longest continuous motion (${seconds(p.maxContinuousMs)}) reached; resting ${seconds(p.restMs)}`);
        enqueue.assign({ restingUntil: s.now() + p.restMs });
      }),
      modelStalled: enqueueActions(({ context: c, enqueue, self }) => {
        const s = svc(self);
        fault(enqueue, s, c, 'model', `no answer for ${seconds(pol(c, c.mode).modelStallMs)} (stalled)`, 'model_stall');
      }),
      obstacles: enqueueActions(({ context: c, event, enqueue, self }) => {
        if (event.type !== 'safety.obstacles') return;
        enqueue.assign({ blocked: event.blocked });
        const why = c.motion ? event.blocked[travelOf(c.motion.value)] : undefined;
        if (why) halt(enqueue, svc(self), c, 'obstacle', why);
      }),
      position: enqueueActions(({ context: c, event, enqueue, self }) => {
        const s = svc(self);
        if (event.type !== 'safety.context') return;
        const position = positionOf(event.values, c.position);
        if (position === c.position) return;
        enqueue.assign({ position });
        const p = pol(c);
        if (c.motion && p.fence && c.motion.value !== p.returnValue && outsideFence(p.fence, position)) {
          halt(enqueue, s, c, 'geofence', position?.fix ? 'the robot left the geofence' : 'the GPS fix was lost inside a geofenced mode');
        }
      }),
      busEvent: enqueueActions(({ context: c, event, enqueue, self }) => {
        const s = svc(self);
        if (event.type !== 'safety.bus') return;
        const e = event.event;
        const lossStops = pol(c, c.mode).stopOnServiceLoss;
        switch (e.type) {
          case 'prompt':
            enqueue.raise({ type: 'model.started' });
            return;
          case 'model.answer':
            fault(enqueue, s, c, 'model', null);
            enqueue.raise({ type: 'model.ended' });
            return;
          case 'model.progress':
            // A streamed answer is arriving: the model answers again, so the pause of a failed (or stalled) call
            // ends now, before the answer's first motion command, and the stall timer restarts. The `model health`
            // fault (a model that keeps failing) stays until the model is healthy; the e-stop is not touched.
            fault(enqueue, s, c, 'model', null);
            enqueue.raise({ type: 'model.progress' });
            return;
          case 'model.error':
            fault(enqueue, s, c, 'model', lossStops ? `the model call failed (${e.error})` : null);
            enqueue.raise({ type: 'model.ended' });
            return;
          case 'model':
            // A model that keeps failing is a stalled model: motion stops and is refused until it answers again.
            // Its own fault key: a later `model.error` (which clears the per-call fault) does not clear it.
            if (e.state === 'failing')
              fault(
                enqueue,
                s,
                c,
                'model health',
                `${e.model} keeps failing (${e.failures ?? 'several'} calls in a row: ${e.reason ?? 'error'})`,
                'model_stall',
              );
            else if (e.state === 'healthy') fault(enqueue, s, c, 'model health', null);
            return;
          case 'stream': {
            // The hosted service's sockets only: a sensor broker (MqttInput's `mqtt` stream) and a device (`mic`, `cam`, `serial`) are not the service.
            if (e.kind === 'mqtt' || e.kind === 'mic' || e.kind === 'cam' || e.kind === 'serial' || e.kind === 'lidar') return;
            const key = `${e.kind} socket ${e.input}`;
            const down = e.state === 'backingOff' || e.state === 'failed';
            fault(enqueue, s, c, key, down && lossStops ? `${e.state === 'failed' ? 'failed' : 'reconnecting'}${e.reason ? ` (${e.reason})` : ''}` : null);
            return;
          }
          case 'mode.changed':
          case 'agent.started': {
            // The new mode has its own model and sockets: faults of the old one no longer apply.
            const mode = e.type === 'mode.changed' ? e.to : e.mode;
            if (mode !== c.mode) enqueue.assign({ mode, faults: {} });
            enqueue.raise({ type: 'model.ended' });
            return;
          }
          default:
            return;
        }
      }),
    },
  }).createMachine({
    id: 'safety',
    context: ({ input, self }) => {
      services.keep(self, input);
      // The thread's latch is taken before every decision: a socket without the gate it latches would not stop motion at once.
      if (input.socket && !input.gate) throw new Error('the safety governor needs the e-stop gate (input.gate) that its socket thread latches');
      const windows = [input.policy.global, ...Object.values(input.policy.modes)].map((p) => p.rate.windowMs);
      return {
        policy: input.policy,
        mode: input.mode,
        actions: {},
        latch: input.latch ?? null,
        stopping: null,
        restingUntil: 0,
        faults: {},
        position: null,
        grants: [],
        windowMs: Math.max(...windows),
        motion: null,
        blocked: {},
      };
    },
    entry: 'announceRestored',
    invoke: [
      { id: 'bus', src: 'busWatch', input: ({ self }) => ({ bus: svc(self).bus }) },
      {
        id: 'estop:serial',
        src: 'estopSerial',
        input: ({ context, self }) => ({ policy: context.policy.estopSerial, logger: svc(self).logger, bus: svc(self).bus }),
      },
      {
        id: 'estop:socket',
        src: 'estopSocket',
        input: ({ context, self }) => {
          const s = svc(self);
          return { options: s.socket, governor: self, status: initialStatus(context.latch), logger: s.logger, bus: s.bus, ...(s.gate ? { gate: s.gate } : {}) };
        },
      },
      {
        id: 'lidar',
        src: 'lidarWatch',
        input: ({ self }) => {
          const s = svc(self);
          return { lidar: s.lidar, view: s.obstacles, board: s.board ?? new BodyBoard(), logger: s.logger, bus: s.bus, media: s.media };
        },
      },
    ],
    on: {
      'safety.request': { actions: 'decideRequest' },
      'safety.obstacles': { actions: 'obstacles' },
      // The lidar's session (the watcher has the sensor): the governor's child `device:lidar`, stopped with it.
      'safety.lidar.hold': {
        actions: enqueueActions(({ enqueue, event }) => enqueue.spawnChild('deviceSession', { id: 'device:lidar', input: (event as HoldLidarSession).input })),
      },
      'safety.register': { actions: 'register' },
      'safety.unregister': { actions: 'unregister' },
      'safety.context': { actions: 'position' },
      'safety.bus': { actions: 'busEvent' },
      // The e-stop line's session (the watcher has the line): the governor's child `device:serial`, stopped with it.
      'safety.serial.hold': {
        actions: enqueueActions(({ enqueue, event }) =>
          enqueue.spawnChild('deviceSession', { id: 'device:serial', input: (event as HoldSerialSession).input }),
        ),
      },
    },
    type: 'parallel',
    states: {
      estop: {
        initial: 'boot',
        states: {
          boot: { always: [{ guard: 'restoredLatch', target: 'latched' }, { target: 'released' }] },
          released: { on: { 'safety.estop': { target: 'latched', actions: 'latch' }, 'safety.release': { actions: 'refuseRelease' } } },
          latched: {
            tags: ['estopped'],
            on: { 'safety.estop': { actions: 'relatch' }, 'safety.release': { target: 'released', actions: 'release' } },
          },
        },
      },
      motion: {
        initial: 'still',
        states: {
          still: { on: { 'motion.fed': 'moving' } },
          moving: {
            tags: ['moving'],
            initial: 'fed',
            states: {
              // Every granted command re-enters `fed` only: it restarts the dead-man timer, not the longest-continuous one.
              fed: { after: { deadman: { actions: 'deadmanExpired' } }, on: { 'motion.fed': { target: 'fed', reenter: true } } },
            },
            after: { maxContinuous: { target: 'resting', actions: 'maxContinuousExpired' } },
            on: { 'motion.ended': 'still' },
          },
          resting: { tags: ['resting'], after: { rest: 'still' }, on: { 'motion.fed': 'moving' } },
        },
      },
      model: {
        initial: 'idle',
        states: {
          idle: { on: { 'model.started': 'waiting' } },
          waiting: {
            after: { modelStall: { target: 'stalled', actions: 'modelStalled' } },
            on: { 'model.started': { target: 'waiting', reenter: true }, 'model.progress': { target: 'waiting', reenter: true }, 'model.ended': 'idle' },
          },
          stalled: { tags: ['modelStalled'], on: { 'model.started': 'waiting', 'model.progress': 'waiting', 'model.ended': 'idle' } },
        },
      },
      agent: {
        initial: 'running',
        states: {
          running: { on: { 'safety.stopping': { target: 'stopping', actions: 'stopping' } } },
          stopping: { tags: ['stopping'] },
        },
      },
    },
  });
}
