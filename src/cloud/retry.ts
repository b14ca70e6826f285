// Retry policy of one HTTP request: which failures are safe to repeat, the project's backoff (src/backoff.ts), Retry-After.
import { backoffDelay } from '../backoff.js';
import { CloudNetworkError, CloudRateLimitError, CloudUnavailableError } from './errors.js';

/**
 * Policy (docs/service.md, "The hosted API client"):
 * - retried: 429; 503 `Failed to connect to <x> server`; a connection that failed before any byte of the
 *   response arrived (reset, refused, hang-up). Nothing else: no other 4xx, no 500, no 503 `API key not
 *   configured`, no validation error, nothing after a stream's first byte.
 * - delay of retry n (1-based): backoffDelay(n) of src/backoff.ts with initialMs = baseDelayMs and
 *   maxMs = maxDelayMs: min(maxDelayMs, baseDelayMs * 2^(n-1)), then "equal jitter" (uniform in
 *   [delay/2, delay]). When the server sent Retry-After, that value is used instead (no jitter: the
 *   server chose it), unless it exceeds maxRetryAfterMs, in which case we give up at once and surface
 *   the 429 with its `retryAfterMs` so the caller can decide.
 * - at most maxRetries retries (so maxRetries + 1 attempts).
 */
export interface RetryOptions {
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  maxRetryAfterMs: number;
  /** Injected for tests; defaults to a real, abortable timer. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Injected for tests; defaults to Math.random. */
  random?: () => number;
  /** Called before each wait, for logs and tests. */
  onRetry?: (info: { attempt: number; delayMs: number; error: unknown }) => void;
}

export const DEFAULT_RETRY: RetryOptions = { maxRetries: 3, baseDelayMs: 250, maxDelayMs: 8000, maxRetryAfterMs: 30_000 };

export const NO_RETRY: RetryOptions = { ...DEFAULT_RETRY, maxRetries: 0 };

/** True when repeating the request cannot do harm and may succeed. */
export function isRetryable(err: unknown): boolean {
  if (err instanceof CloudRateLimitError) return true;
  if (err instanceof CloudUnavailableError) return err.reason === 'unreachable';
  if (err instanceof CloudNetworkError) return err.beforeFirstByte;
  return false;
}

/**
 * Parses a Retry-After header: delay-seconds or an HTTP-date (relative to `now`). Returns milliseconds,
 * or undefined when absent or unparseable. Negative dates give 0.
 */
export function parseRetryAfter(value: string | null | undefined, now: number = Date.now()): number | undefined {
  if (value === null || value === undefined) return undefined;
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return Math.round(Number(v) * 1000);
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** A real timer that rejects with the signal's reason when aborted. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Runs `attempt` until it succeeds, fails with a non-retryable error, runs out of retries, or `signal`
 * aborts (during a wait too). The last error is thrown unchanged.
 */
export async function withRetry<T>(attempt: (n: number) => Promise<T>, opts: RetryOptions = DEFAULT_RETRY, signal?: AbortSignal): Promise<T> {
  const sleep = opts.sleep ?? abortableSleep;
  const random = opts.random ?? Math.random;
  for (let n = 0; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      if (signal?.aborted) throw error;
      if (n >= opts.maxRetries || !isRetryable(error)) throw error;
      const advised = error instanceof CloudRateLimitError || error instanceof CloudUnavailableError ? error.retryAfterMs : undefined;
      if (advised !== undefined && advised > opts.maxRetryAfterMs) throw error;
      const delayMs = advised ?? backoffDelay(n + 1, { initialMs: opts.baseDelayMs, maxMs: opts.maxDelayMs }, random);
      opts.onRetry?.({ attempt: n + 1, delayMs, error });
      await sleep(delayMs, signal);
    }
  }
}
