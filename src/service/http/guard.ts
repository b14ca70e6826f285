// What every HTTP request of the local service passes before its body is read: size, credentials, per-key concurrency, and the body deadline.
import { PassThrough } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { PATHS } from '../../cloud/protocol.js';
import { attachKey, invalidKeyMessage, MISSING_KEY_HTTP, sendError, type ServiceContext } from '../context.js';
import { apiKeyFromHeaders, bearer } from '../auth.js';

/** Routes authenticated by an API key (chat completions, speech synthesis). */
const API_KEY_ROUTES = new Set(['/api/core/:provider/chat/completions', PATHS.speechlabTts, PATHS.speechlabTtsStream, PATHS.speechbTts]);
/** Routes authenticated by a JWT (account and key management). */
const JWT_ROUTES = new Set<string>([PATHS.balance, PATHS.listKeys, PATHS.createKey, PATHS.deleteKey]);

export const bodyTooLarge = (limit: number): string => `Request body too large: the limit is ${limit} bytes`;
export const bodyTimeout = (ms: number): string => `Request timeout: the body was not received within ${ms} ms`;
export const keyBusy = (limit: number): string => `Too many concurrent requests for this API key: the limit is ${limit}. Retry after the running ones finish.`;

/**
 * An answer sent before the body was read ends the connection: the unread rest of the body is never
 * buffered and a client that keeps sending gets a closed socket, not a reader.
 */
function refuseEarly(reply: FastifyReply, status: number, error: string): FastifyReply {
  reply.header('connection', 'close');
  return sendError(reply, status, error);
}

/**
 * Installs the checks that run at `onRequest`, before any byte of the body is read:
 * 1. a declared Content-Length over the limit: 413 (as before, ahead of credentials);
 * 2. API-key routes: 401 for a missing or invalid key; 429 when the key already has
 *    `keyConcurrentRequests` requests in progress (released when each response closes);
 * 3. JWT routes: 401 `User not found` for a missing or invalid token.
 * Then, at `preParsing`, the body must arrive within `bodyTimeoutMs` or the request gets 408 and
 * its connection is closed. Headers and idle connections are bounded by the HTTP server (app.ts).
 */
export function installGuard(app: FastifyInstance, ctx: ServiceContext): void {
  const inFlight = new Map<string, number>();

  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const declared = Number(req.headers['content-length']);
    if (Number.isFinite(declared) && declared > ctx.limits.bodyBytes) return refuseEarly(reply, 413, bodyTooLarge(ctx.limits.bodyBytes));
    const route = req.routeOptions.url ?? '';
    if (API_KEY_ROUTES.has(route)) {
      const presented = apiKeyFromHeaders(req.headers);
      if (!presented) return refuseEarly(reply, 401, MISSING_KEY_HTTP);
      const check = ctx.keys.verify(presented);
      if (!check.ok) return refuseEarly(reply, 401, invalidKeyMessage(check.details));
      const id = check.key.keyId;
      const n = inFlight.get(id) ?? 0;
      if (n >= ctx.limits.keyConcurrentRequests) {
        reply.header('retry-after', '1');
        return refuseEarly(reply, 429, keyBusy(ctx.limits.keyConcurrentRequests));
      }
      inFlight.set(id, n + 1);
      reply.raw.once('close', () => {
        const left = (inFlight.get(id) ?? 1) - 1;
        if (left > 0) inFlight.set(id, left);
        else inFlight.delete(id);
      });
      attachKey(req, check.key);
    } else if (JWT_ROUTES.has(route)) {
      const token = bearer(req.headers);
      if (!token || !(await ctx.jwt.verify(token))) return refuseEarly(reply, 401, 'User not found');
    }
    return undefined;
  });

  app.addHook('preParsing', async (req, reply, payload) => {
    const limited = new PassThrough();
    const timer = setTimeout(() => {
      payload.unpipe(limited);
      reply.header('connection', 'close');
      limited.destroy(Object.assign(new Error(bodyTimeout(ctx.limits.bodyTimeoutMs)), { statusCode: 408 }));
    }, ctx.limits.bodyTimeoutMs);
    timer.unref();
    const done = (): void => clearTimeout(timer);
    payload.once('end', done);
    payload.once('error', done);
    req.raw.once('close', done);
    payload.pipe(limited);
    return limited;
  });
}
