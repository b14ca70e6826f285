// WebSim's emergency stop on the server: the page's `estop` and `estop.release` messages, checked and handed to the agent's safety governor.
import { z } from 'zod';
import type { AgentControl } from '../cortex/contracts.js';
import { secretEquals } from './auth.js';

/** The page's e-stop messages: pressing needs only the page's session; releasing needs the WebSim token typed again. */
export const EstopMessages = [
  z.strictObject({ type: z.literal('estop'), id: z.number().int(), reason: z.string().trim().max(200).optional() }),
  z.strictObject({ type: z.literal('estop.release'), id: z.number().int(), token: z.string().max(1000) }),
] as const;

export type EstopMessage = z.infer<(typeof EstopMessages)[number]>;

export function isEstopMessage(m: { type: string }): m is EstopMessage {
  return m.type === 'estop' || m.type === 'estop.release';
}

/**
 * Handles one e-stop message; returns the reply. Anyone who can open the page can press the button
 * (stopping is always allowed). Releasing needs the WebSim token in the message itself, not only the
 * session cookie: a person at the page types it, so an open tab cannot release by itself. A WebSim
 * without a token (loopback only) cannot release at all: `cortexd estop --release` does.
 */
export async function handleEstop(
  agent: AgentControl,
  token: string | undefined,
  m: EstopMessage,
): Promise<{ type: 'reply'; id: number; ok: boolean; reason?: string }> {
  if (m.type === 'estop') {
    agent.estop(m.reason || 'WebSim emergency stop button', 'websim');
    const latched = agent.safetyStatus().estop !== null;
    return latched ? { type: 'reply', id: m.id, ok: true } : { type: 'reply', id: m.id, ok: false, reason: 'the safety governor did not latch' };
  }
  if (token === undefined)
    return { type: 'reply', id: m.id, ok: false, reason: 'this WebSim has no token, so it cannot release the e-stop: use cortexd estop --release' };
  if (!secretEquals(m.token, token)) return { type: 'reply', id: m.id, ok: false, reason: 'wrong WebSim token' };
  const r = await agent.release('websim');
  return { type: 'reply', id: m.id, ok: r.ok, ...(r.reason !== undefined ? { reason: r.reason } : {}) };
}
