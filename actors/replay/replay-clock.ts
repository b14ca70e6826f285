// The replay's simulated clock: time moves only when the replay moves it, and every timer fires at its own due time, earliest first.
import type { Clock } from '../modes/types.js';

interface Timer {
  due: number;
  fn: () => void;
}

/**
 * A clock for XState (`createActor(..., { clock })`) and the agent's own timers. Unlike XState's
 * SimulatedClock moved in fixed steps, `advanceTo` stops at each due time on the way, so a model
 * answer recorded 57 ms after its question arrives 57 ms after it in the replay too, and what the run
 * did between two timers happens between them in the replay.
 */
export class ReplayClock implements Clock {
  private nowMs = 0;
  private nextId = 1;
  private readonly timers = new Map<number, Timer>();

  now(): number {
    return this.nowMs;
  }

  setTimeout(fn: () => void, ms: number): number {
    const id = this.nextId++;
    this.timers.set(id, { due: this.nowMs + Math.max(0, Number.isFinite(ms) ? ms : 0), fn });
    return id;
  }

  clearTimeout(id: unknown): void {
    this.timers.delete(id as number);
  }

  /** The due time of the earliest pending timer, or undefined when none is pending. */
  nextDue(): number | undefined {
    let due: number | undefined;
    for (const timer of this.timers.values()) if (due === undefined || timer.due < due) due = timer.due;
    return due;
  }

  /**
   * Sets the time to `t` (never backwards) and fires the timers due by then, earliest first, ties in
   * the order they were set; timers set meanwhile fire too when due by `t`, up to `maxFires` in all
   * (a timer that re-arms itself at 0 ms cannot hold the replay here forever). Returns how many fired.
   */
  fireUntil(t: number, maxFires = 10_000): number {
    this.nowMs = Math.max(this.nowMs, t);
    let fired = 0;
    while (fired < maxFires) {
      let earliest: [number, Timer] | undefined;
      for (const entry of this.timers) if (entry[1].due <= this.nowMs && (!earliest || entry[1].due < earliest[1].due)) earliest = entry;
      if (!earliest) break;
      this.timers.delete(earliest[0]);
      fired++;
      earliest[1].fn();
    }
    return fired;
  }

  /**
   * Moves time to `t`, stopping at each due time on the way and at least every `maxStepMs`, and lets
   * the agent's promise chains and I/O run (`settle`) after each stop.
   */
  async advanceTo(t: number, maxStepMs: number, settle: () => Promise<void>): Promise<void> {
    // Fires what is due now first (timers set at 0 ms since the last stop), a bounded number of times.
    for (let i = 0; i < 100 && (this.nextDue() ?? Number.POSITIVE_INFINITY) <= this.nowMs; i++) {
      this.fireUntil(this.nowMs);
      await settle();
    }
    // Timers that keep re-arming at 0 ms would hold time still: after 100 stops at one time, it moves on.
    let stillStops = 0;
    while (this.nowMs < t) {
      const due = this.nextDue() ?? Number.POSITIVE_INFINITY;
      let next = Math.min(t, this.nowMs + maxStepMs, Math.max(due, this.nowMs));
      if (next > this.nowMs) stillStops = 0;
      else if (++stillStops > 100) next = Math.min(t, this.nowMs + maxStepMs);
      this.fireUntil(next);
      await settle();
    }
  }
}
