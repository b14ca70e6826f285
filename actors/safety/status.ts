// The status of the safety governor as others see it (AgentControl.safetyStatus, the socket's STATUS, WebSim): read from its snapshot.
import type { AnyActorRef } from 'xstate';
import type { Latch, SafetyStatus } from '../../src/safety/policy.js';

export type { SafetyStatus };

interface GovernorSnapshot {
  status: string;
  context: { latch: Latch | null; stopping: string | null; faults: Record<string, string> };
  hasTag(tag: string): boolean;
}

/** The status of a governor; one that is not running refuses all motion, and says so. */
export function safetyStatusOf(governor: AnyActorRef | undefined): SafetyStatus {
  const snap = governor?.getSnapshot() as GovernorSnapshot | undefined;
  if (!snap || snap.status !== 'active') return { estop: null, motion: 'still', stopping: true, faults: ['the safety governor is not running'] };
  return {
    estop: snap.context.latch,
    motion: snap.hasTag('moving') ? 'moving' : snap.hasTag('resting') ? 'resting' : 'still',
    stopping: snap.context.stopping !== null,
    faults: Object.entries(snap.context.faults).map(([k, v]) => `${k}: ${v}`),
  };
}
