// A bounded, fair work pool of the local service: at most N jobs run, a bounded queue waits, keys take turns, overflow is refused at once.
import { BackendError } from './backends/chat.js';

export interface PoolOptions {
  /** What the pool runs, for messages: `speech synthesis`, `recognition`. */
  name: string;
  /** Jobs running at once. */
  running: number;
  /** Jobs waiting over all keys; one more is refused with 503. */
  queued: number;
  /** Jobs of one key running at once (so one key never holds every slot). */
  perKeyRunning: number;
  /** Jobs of one key running or waiting; one more is refused with 429. */
  perKeyTotal: number;
}

/** The pool is full: 503 with Retry-After (the service is busy for everyone). */
export class PoolBusyError extends BackendError {
  constructor(name: string, queued: number) {
    super(503, `Service busy: ${queued} ${name} requests are waiting. Retry later.`);
    this.name = 'PoolBusyError';
  }
}

/** One key asked for more than its share: 429 with Retry-After. */
export class KeyBusyError extends BackendError {
  constructor(name: string, limit: number) {
    super(429, `Too many concurrent ${name} requests for this API key: the limit is ${limit}. Retry after the running ones finish.`);
    this.name = 'KeyBusyError';
  }
}

interface Waiter {
  key: string;
  start: () => void;
  fail: (err: unknown) => void;
}

/**
 * Admission is decided at once: a job either starts, waits in a bounded queue, or is refused
 * (PoolBusyError, KeyBusyError). A free slot goes to the waiting key served least recently, so a
 * key with many waiting jobs cannot starve another key's single one. An aborted waiting job leaves
 * the queue.
 */
export class FairPool {
  /** Slots in use: running jobs and held slots. */
  private runningCount = 0;
  private readonly runningByKey = new Map<string, number>();
  /** Slots held outside `run` per key (long-lived workers such as live decoders), bounded like running jobs. */
  private readonly heldByKey = new Map<string, number>();
  private readonly totalByKey = new Map<string, number>();
  /** Waiting jobs per key. */
  private readonly waiting = new Map<string, Waiter[]>();
  private waitingCount = 0;
  /** When each key last had a job started (a counter), for turns. */
  private readonly lastServed = new Map<string, number>();
  private served = 0;

  constructor(readonly opts: PoolOptions) {}

  get stats(): { running: number; waiting: number } {
    return { running: this.runningCount, waiting: this.waitingCount };
  }

  /** Whether a job of `key` would start at once (for best-effort work such as partial transcripts). */
  canStartNow(key: string): boolean {
    return this.runningCount < this.opts.running && (this.runningByKey.get(key) ?? 0) < this.opts.perKeyRunning;
  }

  /**
   * Takes a slot now for a long-lived worker of `key` (a live decoder) without waiting: undefined
   * when every slot is in use or the key already holds perKeyRunning of them. Held slots count
   * against the pool's total, so jobs and held workers together never pass `running`; a key's held
   * slots are counted apart from its jobs (a key's live decoder does not stop its own jobs). The
   * returned release (idempotent) frees the slot and starts the next waiting job first.
   */
  tryHold(key: string): (() => void) | undefined {
    if (this.runningCount >= this.opts.running || (this.heldByKey.get(key) ?? 0) >= this.opts.perKeyRunning) return undefined;
    this.runningCount++;
    this.bump(this.heldByKey, key, 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.runningCount--;
      this.bump(this.heldByKey, key, -1);
      this.startNext();
    };
  }

  /** Runs `job` for `key` when a slot is free; rejects at once when the pool or the key is full. */
  async run<T>(key: string, job: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if ((this.totalByKey.get(key) ?? 0) >= this.opts.perKeyTotal) throw new KeyBusyError(this.opts.name, this.opts.perKeyTotal);
    if (!this.canStartNow(key) && this.waitingCount >= this.opts.queued) throw new PoolBusyError(this.opts.name, this.waitingCount);
    this.bump(this.totalByKey, key, 1);
    try {
      if (!this.canStartNow(key)) await this.wait(key, signal);
      else this.take(key);
      try {
        return await job();
      } finally {
        this.release(key);
      }
    } finally {
      this.bump(this.totalByKey, key, -1);
    }
  }

  /** Rejects every waiting job (the service is closing). */
  drain(err: unknown): void {
    for (const list of this.waiting.values()) for (const w of list) w.fail(err);
    this.waiting.clear();
    this.waitingCount = 0;
  }

  private wait(key: string, signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        key,
        start: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        fail: (err) => {
          signal?.removeEventListener('abort', onAbort);
          reject(err);
        },
      };
      const onAbort = (): void => {
        const list = this.waiting.get(key);
        const i = list?.indexOf(waiter) ?? -1;
        if (list && i >= 0) {
          list.splice(i, 1);
          this.waitingCount--;
          if (list.length === 0) this.waiting.delete(key);
        }
        reject(signal?.reason ?? new Error('aborted'));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const list = this.waiting.get(key) ?? [];
      list.push(waiter);
      this.waiting.set(key, list);
      this.waitingCount++;
    });
  }

  private take(key: string): void {
    this.runningCount++;
    this.bump(this.runningByKey, key, 1);
    this.lastServed.set(key, ++this.served);
  }

  private release(key: string): void {
    this.runningCount--;
    this.bump(this.runningByKey, key, -1);
    this.startNext();
  }

  /** Starts waiting jobs while slots are free, each time for the eligible key served least recently. */
  private startNext(): void {
    while (this.runningCount < this.opts.running) {
      let next: string | undefined;
      for (const key of this.waiting.keys()) {
        if ((this.runningByKey.get(key) ?? 0) >= this.opts.perKeyRunning) continue;
        if (next === undefined || (this.lastServed.get(key) ?? 0) < (this.lastServed.get(next) ?? 0)) next = key;
      }
      if (next === undefined) return;
      const list = this.waiting.get(next)!;
      const w = list.shift()!;
      this.waitingCount--;
      if (list.length === 0) this.waiting.delete(next);
      this.take(next);
      w.start();
    }
    // Keys with nothing running or waiting need no turn record.
    for (const key of this.lastServed.keys()) if (!this.waiting.has(key) && !this.runningByKey.has(key)) this.lastServed.delete(key);
  }

  private bump(map: Map<string, number>, key: string, by: number): void {
    const n = (map.get(key) ?? 0) + by;
    if (n <= 0) map.delete(key);
    else map.set(key, n);
  }
}
