// Builds the fastify application of the local service: body parsing, error shapes, 404s, and every HTTP route.
import Fastify, { type FastifyInstance } from 'fastify';
import { INVALID_JSON, sendError, type ServiceContext } from './context.js';
import { registerAccountRoutes } from './http/account.js';
import { registerChatRoutes } from './http/chat.js';
import { registerTtsRoutes } from './http/tts.js';

/**
 * Every body is read as text and parsed as JSON whatever its Content-Type (clients that forget the
 * header still work); a body that is not JSON becomes INVALID_JSON so each endpoint answers with its
 * own spec message. An empty body is `undefined`.
 */
export function buildApp(ctx: ServiceContext): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: ctx.limits.bodyBytes, forceCloseConnections: true });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(null, INVALID_JSON);
    }
  });

  app.setErrorHandler((err: { code?: string; statusCode?: number; message?: string }, _req, reply) => {
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413)
      return sendError(reply, 413, `Request body too large: the limit is ${ctx.limits.bodyBytes} bytes`);
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500)
      return sendError(reply, err.statusCode, err.message ?? 'Bad request');
    ctx.logger.error({ err }, 'request failed');
    return sendError(reply, 500, `Internal server error: ${err.message ?? 'unknown'}`);
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, 404, `Not found: ${req.method} ${req.url.split('?')[0]}`));

  registerAccountRoutes(app, ctx);
  registerChatRoutes(app, ctx);
  registerTtsRoutes(app, ctx);
  return app;
}
