// The safety governor's status as others see it (the agent's handle, the socket's STATUS, WebSim), followed by subscription to the governor.
import { randomUUID } from 'node:crypto';
import type { AnyActorRef, Subscription } from 'xstate';
import type { Latch, SafetyStatus } from '../../src/safety/policy.js';

export type { SafetyStatus };

interface GovernorSnapshot {
  status: string;
  context: { latch: Latch | null; stopping: string | null; faults: Record<string, string> };
  hasTag(tag: string): boolean;
}

/** The status of a governor that is not running: it refuses all motion, and says so. */
export const GOVERNOR_NOT_RUNNING: SafetyStatus = Object.freeze({
  estop: null,
  motion: 'still',
  stopping: true,
  faults: Object.freeze(['the safety governor is not running']) as string[],
});

/** The status a governor starts with: still, not stopping, no faults, and the latch it restored (if any). */
export function initialStatus(latch: Latch | null | undefined): SafetyStatus {
  return { estop: latch ?? null, motion: 'still', stopping: false, faults: [] };
}

/** The status in one of the governor's snapshots (as its subscribers receive them). */
export function statusOfSnapshot(snapshot: unknown): SafetyStatus {
  const snap = snapshot as GovernorSnapshot | undefined;
  if (!snap || snap.status !== 'active') return GOVERNOR_NOT_RUNNING;
  return {
    estop: snap.context.latch,
    motion: snap.hasTag('moving') ? 'moving' : snap.hasTag('resting') ? 'resting' : 'still',
    stopping: snap.context.stopping !== null,
    faults: Object.entries(snap.context.faults).map(([k, v]) => `${k}: ${v}`),
  };
}

const same = (a: SafetyStatus, b: SafetyStatus): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The governor's answer to `safety.release` (emitted, for the `id` the release carried). */
export interface ReleaseAnswer {
  type: 'safety.release.answer';
  id: string;
  ok: boolean;
  reason?: string;
}

const NOT_RUNNING = 'the safety governor is not running';

/**
 * What one consumer (the agent's handle, the e-stop socket) has of the governor: its newest status,
 * kept by subscribing to it (XState's observer interface), and releases it answers by event. The
 * status changes only when the governor's snapshot does, and is GOVERNOR_NOT_RUNNING once the
 * governor stopped or failed. `onChange` hears each different status. Its owner calls `close()`.
 */
export class GovernorView {
  private latest: SafetyStatus;
  private ended = false;
  private readonly sub: Subscription;

  constructor(
    private readonly governor: AnyActorRef,
    initial: SafetyStatus,
    onChange: (status: SafetyStatus) => void = () => undefined,
  ) {
    this.latest = initial;
    const set = (next: SafetyStatus) => {
      if (same(next, this.latest)) return;
      this.latest = next;
      onChange(next);
    };
    const end = () => {
      this.ended = true;
      set(GOVERNOR_NOT_RUNNING);
    };
    this.sub = governor.subscribe({ next: (snapshot) => set(statusOfSnapshot(snapshot)), complete: end, error: end });
  }

  get status(): SafetyStatus {
    return this.latest;
  }

  /**
   * Asks the governor to release its latch as `source`; resolves with its answer (the emitted
   * `safety.release.answer` for this request), or a refusal when it is not running (or stops first).
   */
  release(source: string): Promise<{ ok: boolean; reason?: string }> {
    if (this.ended) return Promise.resolve({ ok: false, reason: NOT_RUNNING });
    const id = randomUUID();
    return new Promise((resolve) => {
      const subs: Array<{ unsubscribe(): void }> = [];
      const finish = (r: { ok: boolean; reason?: string }) => {
        for (const s of subs) s.unsubscribe();
        resolve(r);
      };
      subs.push(
        this.governor.on('safety.release.answer', (e: ReleaseAnswer) => {
          if (e.id === id) finish(e.ok ? { ok: true } : { ok: false, reason: e.reason ?? 'refused' });
        }),
        this.governor.subscribe({ complete: () => finish({ ok: false, reason: NOT_RUNNING }), error: () => finish({ ok: false, reason: NOT_RUNNING }) }),
      );
      this.governor.send({ type: 'safety.release', source, id });
    });
  }

  close(): void {
    this.sub.unsubscribe();
  }
}
