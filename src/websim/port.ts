// WebSim's port: the configured one, or, when the default is taken (a second agent on this machine), the next free one, said in the log.
import { createServer } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { ResolvedWebSimOptions } from './options.js';

/** How many ports after the default are tried before giving up with the default's error. */
export const PORTS_TRIED = 20;

/** Resolves when `port` can be bound on `host`, rejects with the bind error (EADDRINUSE...) otherwise. */
function probe(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve()));
  });
}

/**
 * Listens on the configured port. With the default port (`nextFree`), a port in use moves to the next
 * free one of the PORTS_TRIED that follow and says so; any other error, or a port set on purpose, fails.
 */
export async function listenOnFreePort(app: FastifyInstance, options: ResolvedWebSimOptions, logger: Pick<Logger, 'warn'>): Promise<void> {
  let port = options.port;
  if (options.nextFree && port !== 0) {
    for (let candidate = port; candidate <= Math.min(65535, options.port + PORTS_TRIED); candidate++) {
      try {
        await probe(options.host, candidate);
        port = candidate;
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
      }
    }
    if (port !== options.port) logger.warn(`WebSim port ${options.port} is in use (another agent?): using ${port} instead (--websim-port N to choose)`);
  }
  await app.listen({ host: options.host, port });
}
