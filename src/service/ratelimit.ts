// In-process token-bucket rate limiter for key and account operations (429 when a bucket is empty).

export interface RateLimitOptions {
  /** Bucket size: requests allowed in a burst. */
  capacity: number;
  /** Tokens added per second. */
  refillPerSecond: number;
}

/**
 * Default for key operations (create, list, delete, balance), per user: bursts of 20, then one
 * request every 3 seconds (20 per minute). Our decision: the spec gives no numbers.
 */
export const KEY_OPS_RATE_LIMIT: RateLimitOptions = { capacity: 20, refillPerSecond: 1 / 3 };

/** One bucket per subject; buckets idle long enough to be full again are forgotten. */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  constructor(
    private readonly opts: RateLimitOptions,
    private readonly now: () => number = () => Date.now(),
  ) {}

  /** Takes one token for `subject`; returns the seconds to wait when none is left, else 0. */
  take(subject: string): number {
    const t = this.now();
    const b = this.buckets.get(subject) ?? { tokens: this.opts.capacity, at: t };
    b.tokens = Math.min(this.opts.capacity, b.tokens + ((t - b.at) / 1000) * this.opts.refillPerSecond);
    b.at = t;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      this.buckets.set(subject, b);
      this.prune(t);
      return 0;
    }
    this.buckets.set(subject, b);
    return Math.ceil((1 - b.tokens) / this.opts.refillPerSecond);
  }

  private prune(t: number): void {
    if (this.buckets.size < 10_000) return;
    const fullAfterMs = (this.opts.capacity / this.opts.refillPerSecond) * 1000;
    for (const [k, b] of this.buckets) if (t - b.at > fullAfterMs) this.buckets.delete(k);
  }
}
