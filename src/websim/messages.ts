// What a WebSim page may send, who may send it (the permission table), and the one place each message is handled.
import { z } from 'zod';
import type { AgentControl } from '../cortex/contracts.js';
import { redact } from '../redact.js';
import { secretEquals, type AttemptLimiter } from './auth.js';
import { EstopMessages, handleEstop, isEstopMessage } from './estop.js';
import type { SimMeta } from './page/state.js';
import { VoiceMessages, isVoiceMessage, type PageVoiceState, type WebSimVoice } from './voice.js';

/** Longest typed line WebSim passes on; a longer one is refused with this number in the reason. */
export const MAX_TEXT_LENGTH = 2000;

export const ClientMessage = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('auth'), id: z.number().int(), token: z.string().max(1000) }),
  z.strictObject({ type: z.literal('mode.switch'), id: z.number().int(), mode: z.string().min(1).max(200) }),
  // Longer than MAX_TEXT_LENGTH parses (the socket's frame limit bounds it), so it can be refused with a reason.
  z.strictObject({ type: z.literal('text'), id: z.number().int(), text: z.string() }),
  z.strictObject({
    type: z.literal('context'),
    id: z.number().int(),
    name: z
      .string()
      .trim()
      .regex(/^[A-Za-z_][A-Za-z0-9_]{0,99}$/),
    value: z.string().trim().max(200),
  }),
  ...EstopMessages,
  ...VoiceMessages,
]);
export type ClientMessage = z.infer<typeof ClientMessage>;

/**
 * Who may send each message. `open`: anyone who can open the page (latching the e-stop is always
 * safe; `auth` is how a page proves it has the token). `token`: only a page that proved it knows the
 * WebSim token (at the socket's upgrade, or with an `auth` message); everyone else is refused with a
 * reason. The microphone is an action (`mic.start` needs the token; its audio then rides binary
 * frames, voice.ts); stopping it and hearing the robot are open. A type missing from this table does
 * not compile.
 */
export const PERMISSIONS = {
  auth: 'open',
  estop: 'open',
  'estop.release': 'token',
  'mode.switch': 'token',
  text: 'token',
  context: 'token',
  'mic.start': 'token',
  'mic.stop': 'open',
  'speech.listen': 'open',
} as const satisfies Record<ClientMessage['type'], 'open' | 'token'>;

export type Reply = { type: 'reply'; id: number; ok: boolean; reason?: string };

/** One connected page: its peer address (for the attempt limiter) and whether it proved the token. */
export interface PageSession {
  peer: string;
  authed: boolean;
  /** Its microphone and speech state (voice.ts). */
  voice: PageVoiceState;
}

export interface MessageContext {
  agent: AgentControl;
  meta: SimMeta;
  token: string;
  limiter: AttemptLimiter;
  voice: WebSimVoice;
}

const refuse = (id: number, reason: string): Reply => ({ type: 'reply', id, ok: false, reason });

/**
 * Checks `token` for `session` through the limiter; a right one opens the session. Returns the
 * refusal reason, or undefined when the token was right.
 */
function prove(ctx: MessageContext, session: PageSession, token: string): string | undefined {
  const r = ctx.limiter.attempt(session.peer, () => secretEquals(token, ctx.token));
  if (r.result === 'ok') {
    session.authed = true;
    return undefined;
  }
  if (r.result === 'locked') return `too many wrong tokens from this user or address: try again in ${Math.ceil(r.waitMs / 1000)} s`;
  return 'wrong WebSim token';
}

/** Handles one parsed message of `session`; returns the reply. Never throws. */
export async function handleMessage(ctx: MessageContext, session: PageSession, m: ClientMessage): Promise<Reply> {
  // A message that carries the token (auth, release) proves it first, so a release typed on a page
  // that has not unlocked yet passes the table below.
  if (m.type === 'auth' || m.type === 'estop.release') {
    const why = prove(ctx, session, m.token);
    if (why) return refuse(m.id, why);
  }
  if (PERMISSIONS[m.type] === 'token' && !session.authed) {
    return refuse(m.id, `${m.type} needs the WebSim token: open the address the agent printed at start (it carries #token=), or type the token in Unlock`);
  }
  if (m.type === 'auth') return { type: 'reply', id: m.id, ok: true, reason: 'unlocked' };
  if (isEstopMessage(m)) return handleEstop(ctx.agent, ctx.token, m);
  if (isVoiceMessage(m)) return ctx.voice.handle(session.voice, m);
  if (m.type === 'text') {
    const text = m.text.trim();
    if (text.length === 0) return refuse(m.id, 'empty line');
    if ([...text].length > MAX_TEXT_LENGTH) return refuse(m.id, `line too long: ${[...text].length} characters, at most ${MAX_TEXT_LENGTH}`);
    return ctx.agent.pushText(text) ? { type: 'reply', id: m.id, ok: true } : refuse(m.id, `mode ${ctx.agent.currentMode()} has no TextInput`);
  }
  if (m.type === 'context') {
    if (!ctx.agent.setContext) return refuse(m.id, 'this agent takes no context values');
    const value = contextValue(m.value);
    ctx.agent.setContext({ [m.name]: value }, 'websim');
    return { type: 'reply', id: m.id, ok: true, reason: `${m.name} = ${JSON.stringify(value)}` };
  }
  if (!ctx.meta.allow_manual_switching) return refuse(m.id, ctx.meta.manual_disabled_reason ?? 'manual switching is off');
  try {
    const result = await ctx.agent.switchMode(m.mode, 'from WebSim');
    return { type: 'reply', id: m.id, ok: result.ok, ...(result.reason !== undefined ? { reason: redact(result.reason) } : {}) };
  } catch (err) {
    return refuse(m.id, redact((err as Error).message));
  }
}

/**
 * A context value as typed in WebSim: `true`/`false` are booleans, a decimal number is a number, and
 * anything else (including an empty field) is the text itself, so `battery_percent` = `15` compares
 * as a number in a `context_aware` rule.
 */
export function contextValue(text: string): string | number | boolean {
  if (text === 'true' || text === 'false') return text === 'true';
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  return text;
}
