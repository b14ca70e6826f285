// Time limits on loopback with real slow clients: WebSim's and /metrics' slow headers, trickled bodies, idle and capped connections, a trickled WebSocket frame, pages that never read.
import t, { type Test } from 'tap';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import { loadConfig } from '../../src/config/load.js';
import { connectionsByPeer } from '../../src/http-limits.js';
import { Metrics, MetricsServer } from '../../src/metrics/prometheus.js';
import { resolveWebSimOptions } from '../../src/websim/options.js';
import { WebSim } from '../../src/websim/server.js';
import { client, stubAgent } from '../helpers/websim.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const logger = pino({ level: 'silent' });
const loaded = await loadConfig({ name: 'default' });
/** Short limits so the file stays quick; the defaults (src/http-limits.ts, socket-guard.ts) are the same code with larger numbers. */
const HTTP = { headersTimeoutMs: 800, requestTimeoutMs: 1500, idleTimeoutMs: 2000, keepAliveTimeoutMs: 500, maxConnectionsPerPeer: 6, checkIntervalMs: 100 };
const SOCKET = { pingIntervalMs: 700, frameTimeoutMs: 1000, checkIntervalMs: 100, maxBufferedBytes: 64 * 1024 };
/** Hang guard of every wait: far above each limit, so a pass never depends on timing. */
const GUARD_MS = 20_000;

const openFds = () => readdirSync('/proc/self/fd').length;

/** A raw TCP client; `closed` resolves when the server closes it, with whatever it answered. */
function raw(port: number): Promise<{ sock: Socket; closed: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    let got = '';
    sock.setEncoding('utf8').on('data', (d: string) => (got += d));
    sock.on('error', () => undefined);
    const closed = new Promise<string>((res, rej) => {
      const timer = setTimeout(() => rej(new Error(`still open after ${GUARD_MS} ms`)), GUARD_MS);
      sock.once('close', () => (clearTimeout(timer), res(got)));
    });
    sock.once('connect', () => resolve({ sock, closed }));
    sock.once('error', reject);
  });
}

/** Writes `text` a byte at a time every `everyMs` until the socket closes. */
function trickle(sock: Socket, text: string | Buffer, everyMs = 150): void {
  const bytes = Buffer.from(text);
  let i = 0;
  const timer = setInterval(() => {
    if (sock.destroyed || i >= bytes.length) return clearInterval(timer);
    sock.write(bytes.subarray(i, ++i));
  }, everyMs);
  sock.once('close', () => clearInterval(timer));
}

async function websim(t: Test) {
  const { agent, bus } = stubAgent(loaded.config);
  const stateDir = mkdtempSync(join(tmpdir(), 'cortexd-websim-limits-'));
  const sim = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent, logger, stateDir, limits: { http: HTTP, socket: SOCKET } });
  t.teardown(() => sim.stop());
  await sim.start();
  return { sim, bus, port: Number(new URL(sim.url!).port), ws: `${sim.url!.replace('http', 'ws')}events` };
}

async function metrics(t: Test) {
  const server = new MetricsServer(new Metrics(), { port: 0, limits: HTTP });
  t.teardown(() => server.stop());
  const { port } = await server.start();
  return port;
}

for (const [name, start] of [
  ['WebSim', async (t: Test) => (await websim(t)).port],
  ['/metrics', metrics],
] as const) {
  t.test(`${name}: slow headers, a trickled body and an idle connection are closed; fds are given back`, async (t) => {
    const port = await start(t);
    const before = openFds();
    const slowHead = await raw(port);
    trickle(slowHead.sock, `GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nX-Slow: ${'a'.repeat(200)}`);
    const slowBody = await raw(port);
    slowBody.sock.write(`POST /metrics HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: text/plain\r\nContent-Length: 5000\r\n\r\n`);
    trickle(slowBody.sock, 'x'.repeat(5000));
    const idle = await raw(port);
    t.match(await slowHead.closed, /^(HTTP\/1\.1 408|)/, 'slow headers closed (408 or reset)');
    t.match(await slowBody.closed, /^(HTTP\/1\.1 (408|404|413)|)/, 'trickled body closed');
    t.match(await idle.closed, /^(HTTP\/1\.1 408|)/, 'an idle connection closed (408 or nothing)');
    // The server side lets go of its sockets too (same process): back to where it was, give or take the test's own.
    for (let i = 0; i < 100 && openFds() > before; i++) await new Promise((r) => setTimeout(r, 50));
    t.ok(openFds() <= before, `fds released (${openFds()} <= ${before})`);
  });

  t.test(`${name}: one peer holds at most maxConnectionsPerPeer connections; the rest are closed at once`, async (t) => {
    const port = await start(t);
    const held = await Promise.all(Array.from({ length: HTTP.maxConnectionsPerPeer }, () => raw(port)));
    const extra = await raw(port);
    t.equal(await extra.closed, '', 'one more is closed without a word');
    for (const h of held) h.sock.destroy();
    // The server hears the closes a moment later: retry until a request is answered (hang guard, not timing).
    let answer = '';
    for (let i = 0; i < 100 && !answer; i++) {
      const again = await raw(port);
      again.sock.write(`GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
      answer = await again.closed;
      if (!answer) await new Promise((r) => setTimeout(r, 50));
    }
    t.match(answer, /^HTTP\/1\.1 \d{3}/, 'once they are gone a new one is served');
  });
}

t.test('WebSim: a WebSocket frame that trickles is closed; a page that keeps sending whole messages is not', async (t) => {
  const { ws, sim } = await websim(t);
  const c = await client(ws);
  const closed = new Promise<void>((resolve) => c.ws.once('close', () => resolve()));
  // A masked text frame announcing 1000 bytes, sent a byte at a time (ws writes whole frames, so write under it).
  const header = Buffer.from([0x81, 0xfe, 0x03, 0xe8, 1, 2, 3, 4]);
  const socket = (c.ws as unknown as { _socket: Socket })._socket;
  socket.write(header);
  trickle(socket, Buffer.alloc(1000, 0x41));
  await closed;
  t.ok(sim.dropped['trickled frame'] + sim.dropped['no pong'] >= 1, `dropped as ${JSON.stringify(sim.dropped)}`);

  // A busy page: a whole message every 100 ms for longer than the frame timeout stays open.
  const busy = await client(ws);
  t.teardown(() => busy.ws.close());
  let open = true;
  busy.ws.once('close', () => (open = false));
  for (let i = 0; i < 25; i++) {
    busy.ws.send(JSON.stringify({ type: 'estop', id: i }));
    await busy.next((m) => m.type === 'reply' && m.id === i);
    await new Promise((r) => setTimeout(r, 100));
  }
  t.ok(open, 'whole messages and pongs keep a page open');
});

t.test('WebSim: pages that never read are dropped (no pong, or too much unsent), and their sockets are freed', async (t) => {
  const { port, bus, sim } = await websim(t);
  const peers = await Promise.all(
    Array.from({ length: HTTP.maxConnectionsPerPeer }, async () => {
      const r = await raw(port);
      r.sock.write(
        `GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      r.sock.pause(); // never reads again: pings go unanswered, events pile up
      return r;
    }),
  );
  // Events a page would get: big enough to fill the socket buffers of a page that does not read.
  const filler = setInterval(() => bus.emit({ type: 'error', at: Date.now(), source: 'test', message: 'x'.repeat(16 * 1024) }), 5);
  t.teardown(() => clearInterval(filler));
  // A paused client never reads the server's close either: watch the server's side.
  const server = (sim as unknown as { app: { server: import('node:http').Server } }).app.server;
  const silentDropped = () => sim.dropped['no pong'] + sim.dropped['slow reader'];
  for (let i = 0; i < GUARD_MS / 50 && (silentDropped() < peers.length || Object.keys(connectionsByPeer(server)).length > 0); i++)
    await new Promise((r) => setTimeout(r, 50));
  clearInterval(filler);
  t.ok(silentDropped() >= peers.length, `every silent page dropped: ${JSON.stringify(sim.dropped)}`);
  t.same(connectionsByPeer(server), {}, 'no connection left on the server');
  for (const p of peers) p.sock.destroy();
  const fresh = new WebSocket(`ws://127.0.0.1:${port}/events`);
  await new Promise((resolve, reject) => (fresh.once('open', resolve), fresh.once('error', reject)));
  fresh.close();
  t.pass('a new page is served afterwards');
});
