// Feeds every Prometheus metric of src/metrics.ts from the agent bus: the one place the runtime records metrics.
import type { Subscription } from 'rxjs';
import type { AgentBus, AgentEvent, StreamEvent, StreamState } from '../cortex/events.js';
import type { Metrics, SocketState } from './prometheus.js';

export interface MetricsFeedOptions {
  /** Loop frequency of a mode, in Hz (from the configuration). */
  hertzOf(mode: string): number;
  /** The model of a mode, for `model.error` events that do not name theirs. */
  modelOf?(mode: string): string | undefined;
}

const SOCKET_STATE: Record<StreamState, SocketState> = {
  connecting: 'connecting',
  streaming: 'streaming',
  backingOff: 'backing_off',
  failed: 'failed',
  stopped: 'closed',
};

/** Cumulative counters of one running stream, as last seen (they restart at 0 with a new stream). */
interface Seen {
  dropped_bytes: number;
  frames_dropped: number;
  cost_cu: number;
}

/** The hosted service a costed action used: the speech connectors (`*_tts`) are speech synthesis. */
function serviceOfConnector(connector: string): string {
  return /tts/i.test(connector) ? 'tts' : connector;
}

/**
 * Subscribes `metrics` to `bus` until the returned subscription ends. Every metric comes from an event:
 * - ticks, tick lateness: `tick`; current mode and its rate: `agent.started`, `mode.changed`;
 * - model latency and errors: `model.answer`, `model.error`; CU: `cost_cu` of `model.answer` (chat),
 *   of `stream` (asr: the audio sent) and of `action` (tts);
 * - socket state and reconnects: `stream` (socket label `<kind>/<input>`); dropped audio bytes and
 *   frames: the cumulative `dropped_bytes`/`frames_dropped` of `stream`, added as they grow;
 * - action queue length: `queue` of `action`;
 * - e-stop latched, e-stops, stops and refused motion commands: `safety`.
 * - turn latency by stage: `stages_ms` of `turn` (the origin stage itself is not observed: it is 0 by definition).
 */
export function feedMetrics(bus: AgentBus, metrics: Metrics, options: MetricsFeedOptions): Subscription {
  const seen = new Map<string, Seen>();
  const states = new Map<string, StreamState>();

  const onStream = (e: StreamEvent) => {
    const socket = `${e.kind}/${e.input}`;
    if (states.get(socket) !== e.state) {
      metrics.setSocketState(socket, SOCKET_STATE[e.state]);
      states.set(socket, e.state);
    }
    const last = seen.get(socket) ?? { dropped_bytes: 0, frames_dropped: 0, cost_cu: 0 };
    // A counter below its last value belongs to a new stream of the same input: it counts from 0.
    const grown = (key: keyof Seen) => {
      const v = e[key];
      if (typeof v !== 'number' || !Number.isFinite(v) || v < 0) return 0;
      const delta = v >= last[key] ? v - last[key] : v;
      last[key] = v;
      return delta;
    };
    // The drop counter of a stream's kind exists (at 0) from its first event, so a scraper sees "no loss", not "unknown".
    const dropped = grown('dropped_bytes');
    if (e.kind === 'asr') metrics.recordDroppedAudio(e.input, dropped);
    const frames = grown('frames_dropped');
    if (e.kind === 'vlm') metrics.recordDroppedFrames(e.input, frames);
    const cost = grown('cost_cu');
    if (cost > 0) metrics.recordCu(e.kind, cost);
    if (e.state === 'stopped' || e.state === 'failed') seen.delete(socket);
    else seen.set(socket, last);
  };

  const on = (e: AgentEvent) => {
    switch (e.type) {
      case 'agent.started':
        metrics.enterMode(e.mode, options.hertzOf(e.mode));
        break;
      case 'mode.changed':
        metrics.enterMode(e.to, options.hertzOf(e.to));
        break;
      case 'tick':
        metrics.recordTick(e.mode, e.lateness_ms);
        break;
      case 'model.answer':
        metrics.recordModelCall(e.model, e.latency_ms);
        if (e.cost_cu) metrics.recordCu('chat', e.cost_cu);
        break;
      case 'model':
        metrics.recordModelHealth(e.model, e.state);
        break;
      case 'model.error':
        metrics.recordModelCall(e.model ?? options.modelOf?.(e.mode) ?? 'model', 0, e.kind ?? 'error');
        break;
      case 'stream':
        onStream(e);
        break;
      case 'safety':
        if (e.kind === 'estop' || e.kind === 'release') metrics.recordEstop(e.kind === 'estop', e.source ?? 'unknown', e.restored === true);
        else if (e.kind === 'stop') metrics.recordSafetyStop(e.cause ?? 'unknown');
        else metrics.recordMotionRefused(e.cause ?? 'unknown');
        break;
      case 'turn':
        for (const [stage, ms] of Object.entries(e.stages_ms)) if (stage !== e.origin && typeof ms === 'number') metrics.recordTurnStage(stage, ms);
        break;
      case 'action':
        if (typeof e.queue === 'number') metrics.setActionQueueLength(e.label, e.queue);
        if (e.cost_cu) metrics.recordCu(serviceOfConnector(e.connector), e.cost_cu);
        break;
      default:
        break;
    }
  };
  return bus.events$.subscribe(on);
}
