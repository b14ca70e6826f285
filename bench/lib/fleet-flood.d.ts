// Types of bench/lib/fleet-flood.js for the tests that run it (test/integration/fleet-flood.test.ts).
export interface Stats {
  n: number;
  p50: number;
  p99: number;
  max: number;
}
export interface FleetFloodOptions {
  commands?: number;
  hertz?: number;
  baselineMs?: number;
  probeEveryMs?: number;
  targetP99Ms?: number;
  settleMs?: number;
  runtimeDir?: string;
  agentEnv?: Record<string, string>;
}
export interface FleetFloodMetrics {
  commands: number;
  publish_ms: number;
  estop_socket_ms: { idle: Stats; flood: Stats };
  tick_lateness_ms: Record<'idle' | 'flood', { p50: number; p99: number; skipped: number; ticks: number; per_s: number | null }>;
  fleet_estop: {
    ok: boolean | null;
    reply_ms: number | null;
    latched_ms_after_last_publish: number | null;
    say_replies_after_it: number;
    say_replies_before_it: number | null;
  };
  says: { answered: number; ok: number; refused: Record<string, number>; unanswered: number };
  rss_mb: { idle: number; peak: number };
}
export function fleetFlood(opts?: FleetFloodOptions): Promise<{ metrics: FleetFloodMetrics; targetsMissed: string[] }>;
