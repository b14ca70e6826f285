// Account and API-key endpoints of the local service: balance, list, create, delete (JWT auth, rate limited).
import type { FastifyInstance } from 'fastify';
import { PATHS } from '../../cloud/protocol.js';
import { planKeyLimit } from '../accounts.js';
import { INVALID_JSON, jwtSubject, sendError, takeKeyOp, type ServiceContext } from '../context.js';
import { KeyLimitError } from '../keys.js';

export function registerAccountRoutes(app: FastifyInstance, ctx: ServiceContext): void {
  app.get(PATHS.balance, async (req, reply) => {
    const { user, userId } = await jwtSubject(ctx, req);
    if (!userId) return sendError(reply, 401, 'User not found');
    if (!user) return sendError(reply, 404, 'User not found');
    if (!takeKeyOp(ctx, user.id, reply)) return reply;
    const balance = ctx.accounts.balance(user.id);
    if (!balance) return sendError(reply, 404, 'User not found');
    return reply.send(balance);
  });

  app.get(PATHS.listKeys, async (req, reply) => {
    const { user } = await jwtSubject(ctx, req);
    if (!user) return sendError(reply, 401, 'User not found');
    if (!takeKeyOp(ctx, user.id, reply)) return reply;
    try {
      return reply.send({ api_keys: ctx.keys.list(user.id) });
    } catch (err) {
      ctx.logger.error({ err }, 'listing API keys failed');
      return sendError(reply, 500, 'Failed to fetch API keys');
    }
  });

  app.post(PATHS.createKey, async (req, reply) => {
    const { user } = await jwtSubject(ctx, req);
    if (!user) return sendError(reply, 401, 'User not found');
    if (!takeKeyOp(ctx, user.id, reply)) return reply;
    try {
      const { apiKey, info } = ctx.keys.create(user.id, { plan: user.plan, limit: planKeyLimit(user.plan) });
      ctx.logger.info({ keyId: info.id, user: user.name }, 'API key created');
      return reply.send({
        message: 'API key created. Store it now: the secret is shown only once.',
        api_key: apiKey,
        api_key_info: info,
      });
    } catch (err) {
      if (err instanceof KeyLimitError) return sendError(reply, 403, err.message);
      ctx.logger.error({ err }, 'creating an API key failed');
      return sendError(reply, 500, 'Failed to create API key');
    }
  });

  app.post(PATHS.deleteKey, async (req, reply) => {
    const { user } = await jwtSubject(ctx, req);
    if (!user) return sendError(reply, 401, 'User not found');
    if (!takeKeyOp(ctx, user.id, reply)) return reply;
    const body = req.body as unknown;
    if (body === undefined || body === INVALID_JSON || body === null || typeof body !== 'object' || Array.isArray(body))
      return sendError(reply, 400, 'No data provided or invalid format');
    const id = (body as { id?: unknown }).id;
    if (typeof id !== 'string' || id.length === 0) return sendError(reply, 400, 'API key ID is required');
    try {
      if (!ctx.keys.delete(user.id, id)) return sendError(reply, 404, 'API key not found');
    } catch (err) {
      ctx.logger.error({ err }, 'deleting an API key failed');
      return sendError(reply, 500, 'Failed to delete API key');
    }
    ctx.logger.info({ keyId: id, user: user.name }, 'API key deleted');
    return reply.send({ message: 'API key deleted' });
  });
}
