// Turns a socket session's state and stats events into the bus `stream` event: the one translation whoever runs a stream uses.
import type { StreamEvent, StreamKind, StreamState } from '../../src/cortex/events.js';
import type { SessionStateEvent } from './session-machine.js';

const STATES: readonly StreamState[] = ['connecting', 'streaming', 'backingOff', 'failed', 'stopped'];
const COUNTERS = ['attempt', 'delay_ms', 'connections', 'sent_bytes', 'dropped_bytes', 'frames_sent', 'frames_dropped', 'cost_cu'] as const;

/**
 * The bus event of one `<kind>.state` or `<kind>.stats` event of a session machine. `input` names
 * the input plugin (e.g. `GoogleASRInput`). Only known fields are copied: nothing else of the
 * machine's events reaches the bus.
 */
export function toStreamEvent(kind: StreamKind, input: string, event: Partial<SessionStateEvent>, at: number = Date.now()): StreamEvent | undefined {
  const state = event.state;
  if (!state || !STATES.includes(state)) return undefined;
  const out: StreamEvent = { type: 'stream', at, kind, input, state };
  for (const key of COUNTERS) {
    const v = event[key];
    if (typeof v === 'number' && Number.isFinite(v)) out[key] = v;
  }
  if (typeof event.reason === 'string') out.reason = event.reason;
  if (event.breaker === true) out.breaker = true;
  if (event.routine === true) out.routine = true;
  return out;
}

/** What can be listened to: a session actor (or any actor that emits its events). */
export interface EmittingActor {
  on(type: string, listener: (event: unknown) => void): { unsubscribe(): void };
}

/** Forwards every state change and counter update of `actor` to `emit` as bus `stream` events until unsubscribed. */
export function forwardStreamEvents(
  actor: EmittingActor,
  kind: StreamKind,
  input: string,
  emit: (event: StreamEvent) => void,
  now: () => number = Date.now,
): { unsubscribe(): void } {
  const forward = (e: unknown) => {
    const out = toStreamEvent(kind, input, e as Partial<SessionStateEvent>, now());
    if (out) emit(out);
  };
  const subs = [actor.on(`${kind}.state`, forward), actor.on(`${kind}.stats`, forward)];
  return { unsubscribe: () => subs.forEach((s) => s.unsubscribe()) };
}
