// Which limits of the safety policy a new configuration loosens, compared with the running one: what a reload needs the operator's identity for.
import type { AgentConfig } from '../config/schema.js';
import { type ModePolicy, policyOf, resolvePolicy } from './policy.js';

const sameFence = (a: ModePolicy['fence'], b: ModePolicy['fence']) => JSON.stringify(a) === JSON.stringify(b);

/** What `next` loosens in one mode's limits against `prev`, in words (empty: nothing). */
function looser(prev: ModePolicy, next: ModePolicy): string[] {
  const out: string[] = [];
  const s = (ms: number) => `${ms / 1000} s`;
  if (!prev.motion && next.motion) out.push('motion allowed where it was forbidden');
  if (prev.allowed !== null && (next.allowed === null || next.allowed.some((v) => !prev.allowed!.includes(v))))
    out.push(`motion values allowed beyond ${JSON.stringify(prev.allowed)}`);
  if (next.rate.commands / next.rate.windowMs > prev.rate.commands / prev.rate.windowMs)
    out.push(`rate limit ${prev.rate.commands} per ${s(prev.rate.windowMs)} -> ${next.rate.commands} per ${s(next.rate.windowMs)}`);
  if (next.maxContinuousMs > prev.maxContinuousMs) out.push(`max_continuous_seconds ${s(prev.maxContinuousMs)} -> ${s(next.maxContinuousMs)}`);
  if (next.restMs < prev.restMs) out.push(`rest_seconds ${s(prev.restMs)} -> ${s(next.restMs)}`);
  if (next.deadmanMs > prev.deadmanMs) out.push(`deadman_seconds ${s(prev.deadmanMs)} -> ${s(next.deadmanMs)}`);
  if (next.modelStallMs > prev.modelStallMs) out.push(`model_stall_seconds ${s(prev.modelStallMs)} -> ${s(next.modelStallMs)}`);
  if (prev.stopOnServiceLoss && !next.stopOnServiceLoss) out.push('stop_on_service_loss turned off');
  if (prev.fence && !sameFence(prev.fence, next.fence)) out.push(next.fence ? 'geofence changed' : 'geofence removed');
  if (next.returnValue !== prev.returnValue && next.returnValue !== null) out.push(`return_value "${next.returnValue}" allowed outside the fence`);
  return out;
}

/**
 * Every way `next` relaxes the safety of `prev`: per mode of `next` (a new mode against the running
 * global limits), the global limits, and the e-stop's own inputs (its serial line, its socket).
 * A tighter or equal policy gives an empty list.
 */
export function safetyRelaxations(prev: Pick<AgentConfig, 'modes' | 'safety'>, next: Pick<AgentConfig, 'modes' | 'safety'>): string[] {
  const a = resolvePolicy(prev);
  const b = resolvePolicy(next);
  const global = looser(a.global, b.global);
  const out = global.map((w) => `safety: ${w}`);
  // A mode that only inherits the loosened global limit is already named by the global line.
  for (const mode of Object.keys(b.modes))
    for (const w of looser(policyOf(a, mode), b.modes[mode]!)) if (!global.includes(w)) out.push(`modes.${mode}.safety: ${w}`);
  if (a.estopSerial && JSON.stringify(a.estopSerial) !== JSON.stringify(b.estopSerial))
    out.push(b.estopSerial ? 'safety.estop_serial changed' : 'safety.estop_serial removed');
  if (a.estopSocket.enabled && !b.estopSocket.enabled) out.push('safety.estop_socket turned off');
  else if (a.estopSocket.path !== b.estopSocket.path || a.estopSocket.group !== b.estopSocket.group) out.push('safety.estop_socket moved or regrouped');
  return [...new Set(out)];
}
