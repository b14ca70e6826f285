// What every route of the local service shares: stores, JWT authority, limits, backends, logger, and the credential checks.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Accounts, Reservation, User } from './accounts.js';
import { apiKeyFromHeaders, bearer, type JwtAuthority } from './auth.js';
import type { ApiKeys, VerifiedKey } from './keys.js';
import { microToBalanceCu, microToCostCu } from './metering.js';
import type { BackendOptions, ServiceLimits } from './options.js';
import type { FairPool } from './pool.js';
import type { TokenBuckets } from './ratelimit.js';
import type { VisionPool } from './vision-pool.js';

/** The bounded pools every route and socket shares (pool.ts, vision-pool.ts). */
export interface ServicePools {
  /** espeak-ng + ffmpeg syntheses. */
  tts: FairPool;
  /** pocketsphinx decodes of all recognition sessions. */
  asr: FairPool;
  /** Vision worker processes. */
  vision: VisionPool;
}

export interface ServiceContext {
  accounts: Accounts;
  keys: ApiKeys;
  jwt: JwtAuthority;
  limits: ServiceLimits;
  backends: BackendOptions | undefined;
  keyOpsLimiter: TokenBuckets;
  logger: Logger;
  /** Aborted when the service closes: every backend call and session listens to it. */
  closing: AbortSignal;
  pools: ServicePools;
  /** Private (0700) temporary directory of synthesised audio, removed at close. */
  tmpDir: string;
  /** Bytes of synthesised audio in tmpDir not yet delivered. */
  pendingAudio: { bytes: number };
  /** Open sockets per API key and kind, for the per-key session limits. */
  openSockets: Map<string, number>;
}

/** Sends the spec's error shape `{error}` (plus optional `details`). */
export function sendError(reply: FastifyReply, status: number, error: string, details?: string): FastifyReply {
  return reply
    .code(status)
    .type('application/json')
    .send(details === undefined ? { error } : { error, details });
}

/** Body marker set by the JSON parser when the body is not valid JSON: each route picks its own message. */
export const INVALID_JSON: unique symbol = Symbol('invalid-json');

/** Decision (spec: "not shown"): the 401 bodies of API-key surfaces (chat completions, speech synthesis). */
export const MISSING_KEY_HTTP = 'Missing API key. Send Authorization: Bearer <API_KEY> or x-api-key: <API_KEY>';
export const invalidKeyMessage = (details: string): string => `Invalid API key: ${details}`;

/** Decision: 402 when the balance is used up, before any backend is called. */
export const INSUFFICIENT_BALANCE = 'Insufficient CU balance: the account has no compute units left. Add prepaid credit or wait for the next billing period.';

/** Keys verified before the body was read (guard.ts), by request. */
const verifiedKeys = new WeakMap<FastifyRequest, VerifiedKey>();
export function attachKey(req: FastifyRequest, key: VerifiedKey): void {
  verifiedKeys.set(req, key);
}

/** The request's API key (already verified by the guard, else verified now); on failure sends the 401. */
export function requireApiKey(ctx: ServiceContext, req: FastifyRequest, reply: FastifyReply): VerifiedKey | undefined {
  const attached = verifiedKeys.get(req);
  if (attached) return attached;
  const presented = apiKeyFromHeaders(req.headers);
  if (!presented) {
    sendError(reply, 401, MISSING_KEY_HTTP);
    return undefined;
  }
  const check = ctx.keys.verify(presented);
  if (!check.ok) {
    sendError(reply, 401, invalidKeyMessage(check.details));
    return undefined;
  }
  return check.key;
}

/** Decision: the 402 text when the balance is there but requests in progress have reserved all of it. */
export const BALANCE_RESERVED =
  'Insufficient CU balance: the remaining compute units are reserved by requests in progress. Retry when they finish, or add prepaid credit.';

/**
 * Decision: the 402 text when the account has credit but not enough for this request's worst case
 * (`estimateMicro`); `what` says what the worst case is made of, e.g. `at most 1200 prompt tokens and
 * 4096 output tokens of gen-4o`.
 */
export const worstCaseMessage = (estimateMicro: number, freeMicro: number, what?: string): string =>
  `Insufficient CU balance: this request may cost up to ${microToCostCu(estimateMicro)} CU${what ? ` (${what})` : ''} and the account has ${Math.max(0, microToBalanceCu(freeMicro))} CU available. Lower max_tokens, shorten the request, or add prepaid credit.`;

/**
 * The 402 text for a refused request: no credit left; credit left but reserved by requests in
 * progress (it would cover this one once they finish); or credit too small for the request's worst case.
 */
export function insufficientMessage(ctx: ServiceContext, userId: string, estimateMicro = 0, what?: string): string {
  const available = ctx.accounts.availableMicro(userId);
  if (available <= 0) return INSUFFICIENT_BALANCE;
  if (available >= Math.max(1, estimateMicro)) return BALANCE_RESERVED;
  return worstCaseMessage(estimateMicro, ctx.accounts.freeMicro(userId), what);
}

/**
 * Admits a metered request (Accounts.reserve): reserves `estimateMicro`, the request's worst case,
 * when the account's free balance covers all of it, or sends the 402. The caller settles the
 * reservation once the answer is known (charge) or the request failed (release).
 */
export function admit(ctx: ServiceContext, key: VerifiedKey, estimateMicro: number, reply: FastifyReply, what?: string): Reservation | undefined {
  const r = ctx.accounts.reserve(key.userId, estimateMicro);
  if (!r) sendError(reply, 402, insufficientMessage(ctx, key.userId, estimateMicro, what));
  return r;
}

/**
 * Verifies the JWT of an account endpoint. Missing or invalid token: 401 `User not found` (spec).
 * A valid token of a user unknown to this database resolves to `{unknownUserId}` so the balance
 * endpoint can answer its 404 row.
 */
export async function jwtSubject(ctx: ServiceContext, req: FastifyRequest): Promise<{ user?: User; userId?: string }> {
  const token = bearer(req.headers);
  if (!token) return {};
  const userId = await ctx.jwt.verify(token);
  if (!userId) return {};
  return { user: ctx.accounts.userById(userId), userId };
}

/** Applies the key-operations rate limit of the user; on refusal sends 429 and returns false. */
export function takeKeyOp(ctx: ServiceContext, userId: string, reply: FastifyReply): boolean {
  const wait = ctx.keyOpsLimiter.take(userId);
  if (wait === 0) return true;
  reply.header('retry-after', String(wait));
  sendError(reply, 429, `Rate limit exceeded: too many key operations. Retry after ${wait} seconds.`);
  return false;
}
