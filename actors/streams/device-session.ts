// A device (the microphone's recorder) as a session of the one reconnect engine: its session input, a root actor for it outside an agent, and the relay of its events to the bus.
import { createActor, type Actor } from 'xstate';
import type { AgentBus, StreamKind } from '../../src/cortex/events.js';
import type { OpenableDevice } from '../../devices/device-link.js';
import { streamSessionMachine, type SessionInput, type SessionStateEvent, type SessionTiming } from './session-machine.js';
import { forwardStreamEvents, toStreamEvent, type EmittingActor } from './stream-event.js';

/**
 * The session machine's input for `device`: `connect` opens it, `attach` wires an open run's data to
 * the device's consumers (RxJS, never actor events), `detach` unwires it. Reopens follow the engine's
 * policy with the device's backoff: a run that lasted `healthyAfterMs` (1 s) and ended is reopened at
 * once; one that ended sooner backs off, and five such in a row open the breaker; a fatal end stops
 * it in `failed`. It emits `<prefix>.state` events like a socket's.
 */
export function deviceSessionInput(device: OpenableDevice, prefix: StreamKind, timing: Partial<SessionTiming> = {}): SessionInput {
  let unwire: (() => void) | undefined;
  return {
    prefix,
    connect: device.connect,
    timing: { backoffInitialMs: device.backoff.initialMs, backoffMaxMs: device.backoff.maxMs, ...timing },
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
  actor: Actor<typeof streamSessionMachine>;
  stop(): void;
}

/** A device's session as its own root actor (tests, tools); the agent runs it as a child of the input that owns the device. */
export function startDeviceSession(
  device: OpenableDevice,
  prefix: StreamKind,
  options: { timing?: Partial<SessionTiming>; onEvent?: (event: { type: string; [k: string]: unknown }) => void } = {},
): DeviceSession {
  const actor = createActor(streamSessionMachine, { input: deviceSessionInput(device, prefix, options.timing) });
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
