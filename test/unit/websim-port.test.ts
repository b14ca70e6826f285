// Proves WebSim's port choice: a busy default port moves to the next free one and says so; a port set on purpose (config, CORTEX_WEBSIM_PORT) does not move.
import t, { type Test } from 'tap';
import { createServer, type Server } from 'node:net';
import Fastify from 'fastify';
import { resolveWebSimOptions } from '../../src/websim/options.js';
import { listenOnFreePort } from '../../src/websim/port.js';

/** Holds a port on 127.0.0.1 (any free one) until the test ends. */
async function hold(t: Test): Promise<number> {
  const server: Server = createServer();
  await new Promise<void>((r) => server.listen({ host: '127.0.0.1', port: 0 }, r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return (server.address() as { port: number }).port;
}

t.test('CORTEX_WEBSIM_PORT sets the port and is checked', async (t) => {
  t.match(resolveWebSimOptions({}, { CORTEX_WEBSIM_PORT: '8123' }), { port: 8123, nextFree: undefined });
  t.throws(() => resolveWebSimOptions({}, { CORTEX_WEBSIM_PORT: 'eighty' }), { message: /CORTEX_WEBSIM_PORT: not a port number: "eighty"/ });
  t.equal(resolveWebSimOptions({ port: 9000 }, {}).nextFree, undefined, 'a port written in the block is meant');
});

t.test('a busy default port: the next free one, said once', async (t) => {
  const busy = await hold(t);
  const app = Fastify();
  t.teardown(() => app.close());
  const warnings: string[] = [];
  await listenOnFreePort(app, { host: '127.0.0.1', port: busy, token: undefined, loopback: true, nextFree: true }, {
    warn: (m: string) => warnings.push(m),
  } as never);
  const port = (app.server.address() as { port: number }).port;
  t.ok(port > busy, `moved on from ${busy} to ${port}`);
  t.same(warnings, [`WebSim port ${busy} is in use (another agent?): using ${port} instead (--websim-port N to choose)`]);
});

t.test('a busy port set on purpose fails with EADDRINUSE', async (t) => {
  const busy = await hold(t);
  const app = Fastify();
  t.teardown(() => app.close());
  await t.rejects(listenOnFreePort(app, { host: '127.0.0.1', port: busy, token: undefined, loopback: true }, { warn: () => {} } as never), {
    code: 'EADDRINUSE',
  });
});
