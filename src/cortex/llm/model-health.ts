// The health of one model plugin for the session: streaming switched off after an unreadable stream, and a model that keeps failing.
import type { Logger } from 'pino';
import { CloudProtocolError } from '../../cloud/errors.js';
import { describeError } from '../../errors.js';
import type { ModelHealthReport } from '../llm.js';

/** Consecutive failed calls after which a model is reported `failing` (and the safety governor treats it as stalled). */
export const FAILING_AFTER = 3;

/**
 * Tracks a plugin's calls. `fallBack(err)` decides whether a failed streamed call is asked again
 * without streaming: only when the stream could not be read (CloudProtocolError: a chunk shape no
 * rule accepts), never for the caller's abort, a provider's own error or a network failure. The first
 * time, streaming is switched off for the rest of the session, with one warning that says why and one
 * `streaming_off` report (a `model` bus event, a metric). `failed()`/`answered()` count consecutive
 * failures: the `FAILING_AFTER`th reports `failing`, the next answer `healthy` again.
 */
export class ModelHealth {
  private streamingOff: string | undefined;
  private failures = 0;
  private reportedFailing = false;

  constructor(
    private readonly label: string,
    private readonly logger: Logger,
    private readonly report: ((r: ModelHealthReport) => void) | undefined,
  ) {}

  /** Streaming is still on for this session. */
  get streaming(): boolean {
    return this.streamingOff === undefined;
  }

  fallBack(err: unknown, signal: AbortSignal): boolean {
    if (signal.aborted || !(err instanceof CloudProtocolError)) return false;
    if (this.streamingOff === undefined) {
      this.streamingOff = describeError(err);
      this.logger.warn(
        { model: this.label, reason: this.streamingOff },
        `${this.label}: its streamed answers cannot be read (${this.streamingOff}); asking without streaming for the rest of this session`,
      );
      this.tell({ state: 'streaming_off', reason: this.streamingOff });
    }
    return true;
  }

  answered(): void {
    this.failures = 0;
    if (!this.reportedFailing) return;
    this.reportedFailing = false;
    this.tell({ state: 'healthy' });
  }

  failed(err: unknown): void {
    this.failures += 1;
    if (this.failures < FAILING_AFTER || this.reportedFailing) return;
    this.reportedFailing = true;
    this.tell({ state: 'failing', reason: describeError(err), failures: this.failures });
  }

  private tell(r: Omit<ModelHealthReport, 'model'>): void {
    try {
      this.report?.({ model: this.label, ...r });
    } catch (err) {
      this.logger.warn(`model health not reported: ${describeError(err)}`);
    }
  }
}
