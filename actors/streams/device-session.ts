// A device (a recorder, a camera, a serial port) as a session actor (./session-machine.ts), which opens it and reopens it when it is lost
// Here: its session input; its states on the bus, for an owner that spawns it as a child; a root actor for it outside the agent
// (the LocalVLMInput worker, tests); and the relay of its events to the bus.
import { createActor, type Actor } from 'xstate';
import type { AgentBus, StreamKind } from '../../src/cortex/events.js';
import type { OpenableDevice } from '../../devices/device-link.js';
import {
  HEALTHY_ONLY_BY_MESSAGE_MS,
  streamSessionLogic,
  type StreamSessionLogic,
  type SessionInput,
  type SessionStateEvent,
  type SessionTiming,
} from './session-machine.js';
import { forwardStreamEvents, toStreamEvent, type EmittingActor } from './stream-event.js';

/**
 * The session machine's input for `device`: `connect` opens it, `attach` wires an open run's data to
 * the device's consumers (RxJS, never actor events), `detach` unwires it. Reopens follow the engine's
 * policy with the device's backoff: a run that lasted `healthyAfterMs` (1 s) and ended is reopened at
 * once; one that ended sooner backs off, and five such in a row open the breaker; a fatal end stops
 * it in `failed`. A device may count only runs that proved themselves (`health: 'data'`) as healthy,
 * and give up after a number of failures in a row (`giveUp`): the engine's count, not its own. It emits `<prefix>.state` events like a socket's.
 */
export function deviceSessionInput(device: OpenableDevice, prefix: StreamKind, timing: Partial<SessionTiming> = {}): SessionInput {
  let unwire: (() => void) | undefined;
  return {
    prefix,
    connect: device.connect,
    timing: {
      backoffInitialMs: device.backoff.initialMs,
      backoffMaxMs: device.backoff.maxMs,
      ...(device.health === 'data' ? { healthyAfterMs: HEALTHY_ONLY_BY_MESSAGE_MS } : {}),
      ...(device.giveUp ? { giveUpAfter: device.giveUp.after, giveUpWhat: device.giveUp.what } : {}),
      ...timing,
    },
    hooks: {
      attach: (link) => {
        unwire = device.attach(link);
      },
      detach: () => {
        unwire?.();
        unwire = undefined;
      },
      keepalive: () => undefined,
      onMessage: () => [],
      isBenignClose: () => false,
    },
  };
}

export interface DeviceSession {
  actor: Actor<StreamSessionLogic>;
  stop(): void;
}

/**
 * A device's session as its own root actor, outside any tree. Production code uses it only in the
 * LocalVLMInput worker (a separate OS process, which cannot be in the agent's tree); tests use it.
 * In the agent every device session is a child `device:<name>` of the actor that owns the device:
 * an input, a background, an action (its connector's port) or the safety governor (the e-stop line).
 */
export function startDeviceSession(
  device: OpenableDevice,
  prefix: StreamKind,
  options: { timing?: Partial<SessionTiming>; onEvent?: (event: { type: string; [k: string]: unknown }) => void } = {},
): DeviceSession {
  const actor = createActor(streamSessionLogic(), { input: deviceSessionInput(device, prefix, options.timing) });
  if (options.onEvent) actor.on('*', options.onEvent);
  actor.start();
  return {
    actor,
    stop() {
      actor.send({ type: 'stop' });
      actor.stop();
    },
  };
}

/**
 * `input` with each of its states also on the bus as a `stream` event of its kind, named `owner`
 * (`move`, `safety`), for an owner that spawns the session as its child and has no listener of its
 * own on it (an action's connector, the e-stop watcher). The hook runs as the state is entered, so the
 * first `connecting` is not missed; the owner says `stopped` when it stops the child.
 */
export function withStatesOnBus(input: SessionInput, bus: AgentBus, owner: string): SessionInput {
  const kind = input.prefix as StreamKind;
  const own = input.hooks.state;
  return {
    ...input,
    hooks: {
      ...input.hooks,
      state: (e) => {
        own?.(e);
        const out = toStreamEvent(kind, owner, e);
        if (out) bus.emit(out);
      },
    },
  };
}

/**
 * Relays the events of an input's device session (child `device:<name>`) until unsubscribed: every
 * event to the plugin's `onEvent`; its states to the bus as `stream` events of `kind` (starting with
 * the `connecting` it was spawned in, which went out before this listener), and each `backingOff` as
 * an `error` that says when the device is reopened. Unsubscribing says `stopped` on the bus.
 */
export function relayDeviceSession(
  actor: EmittingActor,
  plugin: { type: string; device: { kind: StreamKind; onEvent(event: { type: string; [k: string]: unknown }): void } },
  bus: AgentBus,
): { unsubscribe(): void } {
  const { kind } = plugin.device;
  const first = toStreamEvent(kind, plugin.type, { state: 'connecting', attempt: 0 });
  if (first) bus.emit(first);
  plugin.device.onEvent({ type: `${kind}.state`, state: 'connecting' });
  const relay = actor.on('*', (e) => plugin.device.onEvent(e as { type: string }));
  const forward = forwardStreamEvents(actor, kind, plugin.type, (e) => bus.emit(e));
  const errors = actor.on(`${kind}.state`, (e) => {
    const state = e as Partial<SessionStateEvent>;
    if (state.state !== 'backingOff') return;
    // A device's own error already says what failed to open: the engine's "connect failed: " is a socket's word.
    const reason = (state.reason ?? 'the device failed').replace(/^connect failed: /, '');
    const message = `${reason}; the device is reopened in ${state.delay_ms ?? 0} ms`;
    bus.emit({ type: 'error', at: Date.now(), source: `input.${plugin.type}`, message });
  });
  return {
    unsubscribe() {
      errors.unsubscribe();
      forward.unsubscribe();
      relay.unsubscribe();
      bus.emit({ type: 'stream', at: Date.now(), kind, input: plugin.type, state: 'stopped' });
    },
  };
}
