// Reading what a test recorded from the agent's bus: the `stream` state events of one kind (and owner).
import type { AgentEvent } from '../../src/cortex/events.js';

export type StreamEv = Extract<AgentEvent, { type: 'stream' }>;

/** The `stream` events of `kind` in `events` (of the owner `input` when given), in order. */
export function streams(events: readonly AgentEvent[], kind: string, input?: string): StreamEv[] {
  return events.filter((e): e is StreamEv => e.type === 'stream' && e.kind === kind && (input === undefined || e.input === input));
}

/** A predicate for `onBus`: a `stream` event of `kind` in `state` (of the owner `input` when given). */
export function streamState(kind: string, state: string, input?: string): (e: AgentEvent) => e is StreamEv {
  return (e): e is StreamEv => e.type === 'stream' && e.kind === kind && e.state === state && (input === undefined || e.input === input);
}
