// What every route of the local service shares: stores, JWT authority, limits, backends, logger, and the credential checks.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Accounts, User } from './accounts.js';
import { apiKeyFromHeaders, bearer, type JwtAuthority } from './auth.js';
import type { ApiKeys, VerifiedKey } from './keys.js';
import type { BackendOptions, ServiceLimits } from './options.js';
import type { TokenBuckets } from './ratelimit.js';

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
}

/** Sends the spec's error shape `{error}` (plus optional `details`). */
export function sendError(reply: FastifyReply, status: number, error: string, details?: string): FastifyReply {
  return reply.code(status).type('application/json').send(details === undefined ? { error } : { error, details });
}

/** Body marker set by the JSON parser when the body is not valid JSON: each route picks its own message. */
export const INVALID_JSON: unique symbol = Symbol('invalid-json');

/** Decision (spec: "not shown"): the 401 bodies of API-key surfaces (chat completions, speech synthesis). */
export const MISSING_KEY_HTTP = 'Missing API key. Send Authorization: Bearer <API_KEY> or x-api-key: <API_KEY>';
export const invalidKeyMessage = (details: string): string => `Invalid API key: ${details}`;

/** Decision: 402 when the balance is used up, before any backend is called. */
export const INSUFFICIENT_BALANCE = 'Insufficient CU balance: the account has no compute units left. Add prepaid credit or wait for the next billing period.';

/** Verifies the request's API key; on failure sends the 401 and returns undefined. */
export function requireApiKey(ctx: ServiceContext, req: FastifyRequest, reply: FastifyReply): VerifiedKey | undefined {
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

/** Refuses with 402 when the key's account has no CU left. */
export function requireBalance(ctx: ServiceContext, key: VerifiedKey, reply: FastifyReply): boolean {
  if (ctx.accounts.availableMicro(key.userId) > 0) return true;
  sendError(reply, 402, INSUFFICIENT_BALANCE);
  return false;
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
