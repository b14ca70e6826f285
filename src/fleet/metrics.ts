// The fleet's periodic `metrics` message: counters folded from bus events (ticks, model calls and latency, CU, reconnects, commands).
import type { AgentEvent } from '../cortex/events.js';

/** Cumulative since the channel started (a reader that missed messages still gets totals), plus the latency of the last interval. */
export interface FleetMetrics {
  robot: string;
  at: number;
  uptime_ms: number;
  ticks: number;
  ticks_late_skipped: number;
  model_calls: number;
  model_errors: number;
  /** Model latency over the interval since the previous message; null when no call finished. */
  model_latency_ms: { avg: number; max: number; n: number } | null;
  cu_spent: number;
  /** Reconnects of ASR/VLM streams and of this channel to its broker. */
  stream_reconnects: number;
  broker_reconnects: number;
  commands_ok: number;
  commands_refused: number;
  /** Events not published because the events budget was spent, or the broker was unreachable. */
  events_dropped: number;
}

export class MetricsFold {
  private readonly startedAt: number;
  private ticks = 0;
  private late = 0;
  private calls = 0;
  private errors = 0;
  private latencies: number[] = [];
  private cu = 0;
  private streamReconnects = 0;
  private brokerConnects = 0;
  private commandsOk = 0;
  private commandsRefused = 0;
  /** Cumulative cost counters of each running stream (they restart at 0 with a new stream). */
  private readonly streamCost = new Map<string, number>();

  constructor(
    private readonly robot: string,
    now = Date.now(),
  ) {
    this.startedAt = now;
  }

  apply(e: AgentEvent): void {
    switch (e.type) {
      case 'tick':
        this.ticks += 1;
        this.late += e.late_skipped;
        return;
      case 'model.answer':
        this.calls += 1;
        this.latencies.push(e.latency_ms);
        if (e.cost_cu) this.cu += e.cost_cu;
        return;
      case 'model.error':
        this.calls += 1;
        this.errors += 1;
        return;
      case 'action':
        if (e.cost_cu) this.cu += e.cost_cu;
        return;
      case 'stream': {
        const key = `${e.kind}/${e.input}`;
        if (e.state === 'connecting' && (e.connections ?? 0) > 0) this.streamReconnects += 1;
        if (typeof e.cost_cu === 'number' && e.cost_cu >= 0) {
          const last = this.streamCost.get(key) ?? 0;
          this.cu += e.cost_cu >= last ? e.cost_cu - last : e.cost_cu;
          this.streamCost.set(key, e.cost_cu);
        }
        if (e.state === 'stopped' || e.state === 'failed') this.streamCost.delete(key);
        return;
      }
      case 'fleet':
        if (e.state === 'connected') this.brokerConnects += 1;
        return;
      case 'fleet.command':
        if (e.ok) this.commandsOk += 1;
        else this.commandsRefused += 1;
        return;
      default:
        return;
    }
  }

  /** The message for now; starts a new latency interval. */
  take(now: number, eventsDropped: number): FleetMetrics {
    const l = this.latencies;
    this.latencies = [];
    return {
      robot: this.robot,
      at: now,
      uptime_ms: now - this.startedAt,
      ticks: this.ticks,
      ticks_late_skipped: this.late,
      model_calls: this.calls,
      model_errors: this.errors,
      model_latency_ms: l.length ? { avg: Math.round(l.reduce((a, b) => a + b, 0) / l.length), max: Math.max(...l), n: l.length } : null,
      cu_spent: Math.round(this.cu * 1000) / 1000,
      stream_reconnects: this.streamReconnects,
      broker_reconnects: Math.max(0, this.brokerConnects - 1),
      commands_ok: this.commandsOk,
      commands_refused: this.commandsRefused,
      events_dropped: eventsDropped,
    };
  }
}
