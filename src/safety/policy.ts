// The safety policy in code form (milliseconds, per mode) and the one pure decision: may this motion command reach the connector now?
import type { AgentConfig } from '../config/schema.js';
import type { GeofenceConfig, SafetyConfig } from '../config/safety.js';
import { outsideFence, type Fence, type Position } from './geofence.js';
import type { ObstaclePolicy } from './obstacle.js';

/** The limits that apply in one mode, in code units. */
export interface ModePolicy {
  /** False: the mode forbids every motion command (the stop value still passes). */
  motion: boolean;
  /** Values accepted; null: every value the action's schema accepts. */
  allowed: readonly string[] | null;
  stopValue: string;
  /** The one value accepted outside the geofence (null: none). */
  returnValue: string | null;
  rate: { commands: number; windowMs: number };
  maxContinuousMs: number;
  restMs: number;
  deadmanMs: number;
  /** The fastest a body may drive (m/s) and turn (deg/s) in the mode; null: no cap beyond the connector's own. */
  maxLinearMps: number | null;
  maxAngularDps: number | null;
  modelStallMs: number;
  stopOnServiceLoss: boolean;
  fence: Fence | null;
}

export interface EstopSerialPolicy {
  binding: 'serialport' | 'mock';
  path: string;
  baudRate: number;
  sentence: string;
  releaseSentence: string | null;
}

export interface SafetyPolicy {
  /** By mode name; `of(mode)` falls back to the global limits for a name it does not know. */
  modes: Record<string, ModePolicy>;
  global: ModePolicy;
  estopSerial: EstopSerialPolicy | null;
  estopSocket: { enabled: boolean; path: string | undefined; group: string | number | undefined };
  /** The obstacle guard (`safety.obstacle`), the same in every mode; null: off. */
  obstacle: ObstaclePolicy | null;
}

/** The built-in limits, used where neither the mode nor the global block sets one (docs/safety.md, "Limits"). */
export const DEFAULT_LIMITS = {
  stop_value: 'stand still',
  rate_limit: { commands: 4, per_seconds: 1 },
  max_continuous_seconds: 60,
  rest_seconds: 2,
  deadman_seconds: 3,
  model_stall_seconds: 5,
  stop_on_service_loss: true,
} as const;

function fenceOf(g: GeofenceConfig | null | undefined): Fence | null {
  if (!g) return null;
  if ('center' in g) return { kind: 'circle', center: { lat: g.center.latitude, lon: g.center.longitude }, radiusM: g.radius_m };
  return { kind: 'polygon', corners: g.polygon.map((p) => ({ lat: p.latitude, lon: p.longitude })) };
}

type Limits = Omit<SafetyConfig, 'estop_serial' | 'estop_socket' | 'obstacle'>;

function modePolicy(global: Limits, mode: Limits): ModePolicy {
  const pick = <K extends keyof Limits>(k: K): Limits[K] => (mode[k] !== undefined ? mode[k] : global[k]);
  const rate = pick('rate_limit') ?? DEFAULT_LIMITS.rate_limit;
  return {
    motion: pick('motion') ?? true,
    allowed: pick('allowed_values') ?? null,
    stopValue: pick('stop_value') ?? DEFAULT_LIMITS.stop_value,
    returnValue: pick('return_value') ?? null,
    rate: { commands: rate.commands, windowMs: rate.per_seconds * 1000 },
    maxContinuousMs: (pick('max_continuous_seconds') ?? DEFAULT_LIMITS.max_continuous_seconds) * 1000,
    restMs: (pick('rest_seconds') ?? DEFAULT_LIMITS.rest_seconds) * 1000,
    deadmanMs: (pick('deadman_seconds') ?? DEFAULT_LIMITS.deadman_seconds) * 1000,
    maxLinearMps: pick('max_linear_speed_mps') ?? null,
    maxAngularDps: pick('max_angular_speed_dps') ?? null,
    modelStallMs: (pick('model_stall_seconds') ?? DEFAULT_LIMITS.model_stall_seconds) * 1000,
    stopOnServiceLoss: pick('stop_on_service_loss') ?? DEFAULT_LIMITS.stop_on_service_loss,
    // `geofence: null` in a mode removes the global fence; absent inherits it.
    fence: fenceOf(mode.geofence !== undefined ? mode.geofence : global.geofence),
  };
}

/** The policy of a loaded configuration: converted once, here (seconds to ms, the mode blocks over the global one). */
export function resolvePolicy(config: Pick<AgentConfig, 'modes' | 'safety'>): SafetyPolicy {
  const safety = config.safety ?? { estop_socket: { enabled: true } };
  const { estop_serial, estop_socket, obstacle, ...global } = safety;
  const modes: Record<string, ModePolicy> = {};
  for (const [name, mode] of Object.entries(config.modes)) modes[name] = modePolicy(global, mode.safety ?? {});
  return {
    modes,
    global: modePolicy(global, {}),
    estopSerial: estop_serial
      ? {
          binding: estop_serial.binding,
          path: estop_serial.path,
          baudRate: estop_serial.baud_rate,
          sentence: estop_serial.sentence,
          releaseSentence: estop_serial.release_sentence,
        }
      : null,
    estopSocket: { enabled: estop_socket?.enabled ?? true, path: estop_socket?.path, group: estop_socket?.group },
    obstacle: obstacle ? { stopM: obstacle.stop_distance_m, slowM: obstacle.slow_distance_m, maxScanAgeMs: obstacle.max_scan_age_ms } : null,
  };
}

export function policyOf(policy: SafetyPolicy, mode: string): ModePolicy {
  return Object.hasOwn(policy.modes, mode) ? policy.modes[mode]! : policy.global;
}

/**
 * The motion value of a command, as the limits name it: the one string field of the action's
 * arguments (`{action: "turn left"}` -> `turn left`), a bare string as is, anything else as JSON.
 */
export function motionValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1 && typeof entries[0]![1] === 'string') return entries[0]![1] as string;
  }
  return JSON.stringify(value) ?? String(value);
}

/** Why motion was refused or stopped (metrics label and bus field). */
export type SafetyCause =
  | 'estop'
  | 'stopping'
  | 'mode'
  | 'value'
  | 'health'
  | 'rest'
  | 'geofence'
  | 'rate'
  | 'deadman'
  | 'max_continuous'
  | 'model_stall'
  | 'service'
  | 'obstacle'
  | 'no_governor';

import type { Latch, SafetyStatus } from '../cortex/safety-status.js';

export type { Latch, SafetyStatus };

/** What the governor knows when a command arrives. */
export interface Facts {
  latch: Latch | null;
  /** Why the agent is stopping, when it is. */
  stopping: string | null;
  /** Clock ms until which motion rests after max_continuous stopped it. */
  restingUntil: number;
  /** Unhealthy sources (model, sockets of the hosted service) and why. */
  faults: Readonly<Record<string, string>>;
  position: Position | null;
  /** Clock ms of the motion commands granted recently (oldest first). */
  grants: readonly number[];
}

export interface MotionRequest {
  mode: string;
  label: string;
  value: unknown;
}

export type Decision = { ok: true; stop: boolean; value: string } | { ok: false; cause: SafetyCause; reason: string; value: string };

/**
 * The one decision, pure: refuse while the e-stop is latched (everything, the stop value too: the
 * governor has already sent the stop command); accept the stop value otherwise; then refuse while
 * stopping, in a mode that forbids motion, a value the mode does not allow, while unhealthy, while
 * resting, outside the geofence (except the return value; no fix counts as outside) and above the
 * rate limit. Checks run in that order, so the reason names the first limit that applies.
 */
export function decide(p: ModePolicy, facts: Facts, req: MotionRequest, now: number): Decision {
  const value = motionValue(req.value);
  const no = (cause: SafetyCause, reason: string): Decision => ({ ok: false, cause, reason, value });
  if (facts.latch) return no('estop', `emergency stop latched (${facts.latch.source}: ${facts.latch.reason}); motion is refused until a person releases it`);
  if (value === p.stopValue) return { ok: true, stop: true, value };
  if (facts.stopping !== null) return no('stopping', `the agent is stopping (${facts.stopping})`);
  if (!p.motion) return no('mode', `mode ${req.mode} forbids motion`);
  if (p.allowed && !p.allowed.includes(value))
    return no('value', `"${value}" is not allowed in mode ${req.mode} (allowed: ${p.allowed.map((v) => `"${v}"`).join(', ') || 'none'})`);
  const faults = Object.entries(facts.faults);
  if (faults.length > 0) return no('health', `motion is paused while ${faults.map(([k, v]) => `${k}: ${v}`).join('; ')}`);
  if (facts.restingUntil > now) return no('rest', `resting after the longest continuous motion (${Math.ceil((facts.restingUntil - now) / 1000)} s left)`);
  if (p.fence && value !== p.returnValue && outsideFence(p.fence, facts.position)) {
    const where = facts.position ? 'the robot is outside the geofence' : 'there is no GPS fix to check the geofence';
    return no('geofence', `${where}; only ${p.returnValue ? `"${p.returnValue}"` : 'the stop value'} is accepted`);
  }
  const recent = facts.grants.filter((t) => t > now - p.rate.windowMs).length;
  if (recent >= p.rate.commands) return no('rate', `rate limit: at most ${p.rate.commands} motion commands per ${p.rate.windowMs / 1000} s`);
  return { ok: true, stop: false, value };
}

/** The grants still inside the longest rate window (what the governor keeps). */
export function keepGrants(grants: readonly number[], now: number, windowMs: number): number[] {
  return grants.filter((t) => t > now - windowMs);
}
