// The fleet's command inbox: bounded, one command at a time in the order received, e-stop and release in a lane of their own
// The urgent lane never waits; a full inbox refuses the newest command and counts the refusal.
export interface InboxStats {
  /** Commands waiting now (not counting the one running). */
  queued: number;
  capacity: number;
  /** Commands refused because the inbox was full, since the channel started. */
  refused_full: number;
  /** Commands refused before parsing because they were too large, since the channel started. */
  refused_too_large: number;
}

export type Offer = { ok: true } | { ok: false; reason: string };

/**
 * Policy: a command that finds `capacity` commands waiting is refused (the sender gets a reply that
 * says so, with the count), never queued and never silently dropped; nothing that was accepted is
 * dropped. Urgent commands (`estop`, `release`) start at once, whatever waits. Between two queued
 * commands the inbox yields to the event loop, so a run of instant commands (`say`) never holds the
 * e-stop socket, the tick or the MQTT client's own reading.
 */
export class CommandInbox<T> {
  private readonly queue: T[] = [];
  private running = false;
  private stopped = false;
  private refusedFull = 0;
  private refusedTooLarge = 0;

  constructor(
    private readonly options: {
      capacity: number;
      run: (item: T) => Promise<void>;
      /** Called when the stats change (the channel republishes its state, coalesced). */
      onChange?: () => void;
    },
  ) {}

  /** Takes `item`: at once when urgent, queued when there is room, refused otherwise. */
  offer(item: T, urgent: boolean): Offer {
    if (this.stopped) return { ok: false, reason: 'the fleet channel is stopping' };
    if (urgent) {
      void this.options.run(item);
      return { ok: true };
    }
    if (this.queue.length >= this.options.capacity) {
      this.refusedFull += 1;
      this.options.onChange?.();
      return {
        ok: false,
        reason: `inbox full: ${this.queue.length} commands wait (at most ${this.options.capacity}); refused, ${this.refusedFull} so far. Send it again later (estop and release never wait)`,
      };
    }
    this.queue.push(item);
    this.options.onChange?.();
    if (!this.running) void this.drain();
    return { ok: true };
  }

  /** Counts a command refused before parsing (it never reached the inbox). */
  tooLarge(): void {
    this.refusedTooLarge += 1;
    this.options.onChange?.();
  }

  get stats(): InboxStats {
    return { queued: this.queue.length, capacity: this.options.capacity, refused_full: this.refusedFull, refused_too_large: this.refusedTooLarge };
  }

  /** Forgets what waits (the channel is stopping); the one running finishes. Returns the ones dropped. */
  stop(): T[] {
    this.stopped = true;
    return this.queue.splice(0);
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      for (let item = this.queue.shift(); item !== undefined && !this.stopped; item = this.queue.shift()) {
        this.options.onChange?.();
        try {
          await this.options.run(item);
        } catch {
          /* run answers its own failures */
        }
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.running = false;
    }
  }
}
