// Builds the fastify application of the local service: body parsing, error shapes, 404s, and every HTTP route.
import Fastify, { type FastifyInstance } from 'fastify';
import { INVALID_JSON, sendError, type ServiceContext } from './context.js';
import { registerAccountRoutes } from './http/account.js';
import { registerChatRoutes } from './http/chat.js';
import { bodyTooLarge, installGuard } from './http/guard.js';
import { checkJsonLimits } from './http/json-limits.js';
import { registerTtsRoutes } from './http/tts.js';
import { PATHS } from '../cloud/protocol.js';

/**
 * The spec's 400 text of a body that is not valid JSON, per route: a body over the JSON limits is
 * answered with it plus what was exceeded and where.
 */
/** Code of the parser's error for a body over the JSON limits (answered with its own message). */
const JSON_LIMIT = 'CORTEX_JSON_LIMIT';

function invalidJsonText(route: string | undefined): string {
  if (route === PATHS.deleteKey) return 'No data provided or invalid format';
  if (route?.includes('/tts')) return 'Missing or invalid JSON in request';
  return 'Invalid JSON';
}

/**
 * Every body is read as text and parsed as JSON whatever its Content-Type (clients that forget the
 * header still work); a body that is not JSON becomes INVALID_JSON so each endpoint answers with its
 * own spec message. An empty body is `undefined`. Before parsing, one scan of the bytes bounds the
 * nesting depth (limits.jsonDepth: 400) and the number of objects and arrays (limits.jsonContainers:
 * 413), with the route's invalid-JSON text plus the bound and the byte where it was passed.
 *
 * Time bounds (limits): headers must arrive within headersTimeoutMs (Node then closes the
 * connection), a body within bodyTimeoutMs (guard.ts: 408), a connection moving no byte for
 * idleTimeoutMs is closed, and an idle keep-alive connection after 5 s. Node's own whole-request
 * timeout is a backstop a little after the body deadline.
 */
export function buildApp(ctx: ServiceContext): FastifyInstance {
  const l = ctx.limits;
  const app = Fastify({
    logger: false,
    bodyLimit: l.bodyBytes,
    forceCloseConnections: true,
    connectionTimeout: l.idleTimeoutMs,
    keepAliveTimeout: 5000,
    requestTimeout: l.headersTimeoutMs + l.bodyTimeoutMs + 5000,
    http: { headersTimeout: l.headersTimeoutMs, connectionsCheckingInterval: Math.min(1000, l.headersTimeoutMs) },
    // Requests Node refuses before fastify sees them (headers too slow, malformed) still get a JSON body.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket) => {
      const timeout = err.code === 'ERR_HTTP_REQUEST_TIMEOUT';
      const [status, reason, error] = timeout
        ? [408, 'Request Timeout', `Request timeout: the headers were not received within ${l.headersTimeoutMs} ms`]
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? [431, 'Request Header Fields Too Large', 'Request headers too large']
          : [400, 'Bad Request', `Bad request: ${err.code ?? 'malformed HTTP'}`];
      const body = JSON.stringify({ error });
      if (socket.writable && !(socket as { _httpMessage?: unknown })._httpMessage)
        socket.end(
          `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
        );
      else socket.destroy(err);
    },
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (req, body, done) => {
    const bytes = body as Buffer;
    // Depth and size are bounded by one scan of the bytes before JSON.parse sees them: a megabyte
    // of `[[[[` costs a tenth of a millisecond to refuse instead of a quarter of a second to parse.
    const refused = checkJsonLimits(bytes, { depth: l.jsonDepth, containers: l.jsonContainers });
    if (refused)
      return done(Object.assign(new Error(`${invalidJsonText(req.routeOptions.url)}: ${refused.message}`), { statusCode: refused.status, code: JSON_LIMIT }));
    const text = bytes.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch {
      done(null, INVALID_JSON);
    }
  });

  app.setErrorHandler((err: { code?: string; statusCode?: number; message?: string }, _req, reply) => {
    if (err.code === JSON_LIMIT) return sendError(reply, err.statusCode ?? 400, err.message ?? 'Invalid JSON');
    if (err.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || err.statusCode === 413) return sendError(reply, 413, bodyTooLarge(ctx.limits.bodyBytes));
    if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return sendError(reply, err.statusCode, err.message ?? 'Bad request');
    ctx.logger.error({ err }, 'request failed');
    return sendError(reply, 500, `Internal server error: ${err.message ?? 'unknown'}`);
  });
  app.setNotFoundHandler((req, reply) => sendError(reply, 404, `Not found: ${req.method} ${req.url.split('?')[0]}`));

  installGuard(app, ctx);
  registerAccountRoutes(app, ctx);
  registerChatRoutes(app, ctx);
  registerTtsRoutes(app, ctx);
  return app;
}
