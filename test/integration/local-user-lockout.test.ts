// Another local user fills every per-peer limit and guesses WebSim tokens from rotating 127.x addresses: the operator, the page and the robot's model calls are still served.
import t from 'tap';
import { request as httpRequest } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/load.js';
import { Metrics, MetricsServer } from '../../src/metrics/prometheus.js';
import { startService } from '../../src/service/index.js';
import { resolveWebSimOptions } from '../../src/websim/options.js';
import { WebSim } from '../../src/websim/server.js';
import { client, stubAgent } from '../helpers/websim.js';
import { runAsStranger, strangerUser } from '../helpers/stranger.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(240_000);

const logger = pino({ level: 'silent' });
const TOKEN = 'Xk2-pQ9_vR4mT7wZs1nB8cY3';

/**
 * What the other user runs (node: built-ins only). It keeps, re-opening any the server closes:
 * idle WebSocket upgrades to the open WebSim (its cap and more), slow connections to the model
 * service and to /metrics (their caps and more), and it reports once each server has refused the
 * extra ones, i.e. its budget is full. Then, on request, 30 wrong tokens at once to the WebSim that
 * has a configured token, each from another 127.0.x.y source address.
 */
const SCRIPT = String.raw`
import { connect } from 'node:net';
import { request } from 'node:http';
const [webOpen, webToken, service, metrics] = process.argv.slice(2).map(Number);
let stopping = false;
const refused = { websim: 0, service: 0, metrics: 0 };
const targets = [
  { name: 'websim', port: webOpen, n: 40, bytes: (p) => 'GET /events HTTP/1.1\r\nHost: 127.0.0.1:' + p + '\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n' },
  { name: 'service', port: service, n: 300, bytes: (p) => 'POST /api/core/provider_a/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:' + p + '\r\n' },
  { name: 'metrics', port: metrics, n: 16, bytes: (p) => 'GET /metrics HTTP/1.1\r\nHo' },
];
function hold(tg) {
  if (stopping) return;
  const s = connect(tg.port, '127.0.0.1');
  let got = '';
  s.on('error', () => undefined);
  s.on('data', (d) => (got += d));
  s.once('connect', () => s.write(tg.bytes(tg.port)));
  s.once('close', () => {
    if (!got.startsWith('HTTP/1.1 101')) refused[tg.name]++;
    setTimeout(() => hold(tg), 200);
  });
}
for (const tg of targets) for (let i = 0; i < tg.n; i++) hold(tg);
const full = setInterval(() => {
  if (refused.websim >= 8 && refused.service >= 44 && refused.metrics >= 8) {
    clearInterval(full);
    console.log(JSON.stringify({ type: 'full', refused }));
  }
}, 50);
function guess(i) {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port: webToken, path: '/api/state', localAddress: '127.0.' + (1 + (i >> 7)) + '.' + (2 + (i % 128)),
      headers: { 'x-websim-token': 'wrong-guess-' + i + '-wrong-guess' } }, (res) => (res.resume(), resolve(res.statusCode)));
    req.on('error', (e) => resolve(String(e.code)));
    req.end();
  });
}
process.stdin.on('data', async (d) => {
  if (String(d).includes('guess')) {
    const statuses = await Promise.all(Array.from({ length: 30 }, (_, i) => guess(i)));
    console.log(JSON.stringify({ type: 'guessed', statuses }));
  }
});
process.stdin.on('end', () => ((stopping = true), process.exit(0)));
`;

function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string; cookie?: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { headers }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      const cookie = res.headers['set-cookie']?.[0]?.split(';')[0];
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, ...(cookie ? { cookie } : {}) }));
    });
    req.on('error', reject);
    req.end();
  });
}

t.test('one local user holding every per-peer budget and guessing tokens locks nobody else out', async (t) => {
  const user = strangerUser();
  if (!user) {
    t.comment('not root (or no setpriv): the check with another user is left out');
    return;
  }
  const { config } = await loadConfig({ name: 'default' });
  const sims: WebSim[] = [];
  const startSim = async (token?: string) => {
    const { agent } = stubAgent(config);
    let latched = 0;
    agent.estop = () => void latched++;
    agent.safetyStatus = () =>
      ({ estop: latched > 0 ? { reason: 'test', source: 'websim', at: 0 } : null, motion: 'still', stopping: false, faults: [] }) as never;
    const sim = new WebSim(resolveWebSimOptions({ port: 0, ...(token ? { token } : {}) }, {}), {
      agent,
      logger,
      stateDir: mkdtempSync(join(tmpdir(), 'cortexd-lockout-')),
    });
    sims.push(sim);
    await sim.start();
    return { sim, latched: () => latched };
  };
  const open = await startSim();
  const tokened = await startSim(TOKEN);
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 's'.repeat(40), logger });
  const robotKey = svc.admin.createApiKey('robot').apiKey;
  const metricsServer = new MetricsServer(new Metrics(), { port: 0 });
  const scrape = (await metricsServer.start()).url;
  t.teardown(async () => {
    await Promise.all(sims.map((s) => s.stop()));
    await metricsServer.stop();
    await svc.close();
  });
  const port = (url: string) => new URL(url).port;

  const stranger = runAsStranger(user, SCRIPT, [port(open.sim.url!), port(tokened.sim.url!), String(svc.port), port(scrape)]);
  t.teardown(() => stranger.stop());
  const t0 = Date.now();
  const full = await stranger.line<{ refused: Record<string, number> }>('full', 90_000);
  t.comment(`the other user's extra connections refused: ${JSON.stringify(full.refused)} (budgets full after ${Date.now() - t0} ms)`);

  // The audit's measures, each while the other user's budget stays full.
  let pages = 0;
  for (let i = 0; i < 13; i++) if ((await get(open.sim.url!)).status === 200) pages++;
  t.equal(pages, 13, 'every page load of the open WebSim is served (the audit: 0 of 13)');

  let calls = 0;
  for (let i = 0; i < 10; i++) {
    const res = await fetch(`${svc.url}/api/core/provider_a/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${robotKey}` },
      body: JSON.stringify({ model: 'gen-4o', messages: [{ role: 'user', content: 'hello' }] }),
    });
    await res.arrayBuffer();
    if (res.status === 200) calls++;
    else t.comment(`model call ${i}: ${res.status}`);
  }
  t.equal(calls, 10, "every one of the robot's model calls is served (the audit: 429 on 10 of 10)");

  let scrapes = 0;
  for (let i = 0; i < 31; i++) if ((await get(scrape)).status === 200) scrapes++;
  t.equal(scrapes, 31, 'every /metrics scrape is served (the audit: 0 of 31)');

  // Guesses from rotating loopback addresses are one user: they lock that user out, not the operator.
  stranger.child.stdin!.write('guess\n');
  const guessed = await stranger.line<{ statuses: Array<number | string> }>('guessed');
  const locked = guessed.statuses.filter((s) => s === 429).length;
  t.comment(`the other user's 30 guesses from 30 addresses: ${JSON.stringify(guessed.statuses)}`);
  t.ok(
    guessed.statuses.every((s) => s === 401 || s === 429),
    'every guess was refused',
  );
  // One guess per address: a limiter keyed on the address would have answered every one 401.
  t.ok(locked > 0, `rotating the source within 127/8 does not reset the limiter (${locked} of 30 locked out)`);

  const host = { host: new URL(tokened.sim.url!).host };
  let served = 0;
  let cookie = '';
  for (let i = 0; i < 19; i++) {
    const r = await get(`${tokened.sim.url!}api/state`, { ...host, authorization: `Bearer ${TOKEN}` });
    if (r.status === 200) served++;
  }
  t.equal(served, 19, "the operator's right token is served while the other user is locked out (the audit: 429 on 18 of 19)");
  const landing = await get(`${tokened.sim.url!}?token=${TOKEN}`, host);
  cookie = landing.cookie ?? '';
  t.match(cookie, /^cortexd_websim=/, 'the page gets its session');

  let stops = 0;
  for (let i = 0; i < 10; i++) {
    const page = await client(`${tokened.sim.url!.replace('http', 'ws')}events`, { cookie });
    page.ws.send(JSON.stringify({ type: 'estop', id: i }));
    const reply = await page.next((m) => m.type === 'reply' && m.id === i);
    if ((reply as { ok?: boolean }).ok) stops++;
    page.ws.close();
  }
  t.equal(stops, 10, "the page's EMERGENCY STOP works 10 of 10 with a configured token (the audit: 0 of 10)");
  t.equal(tokened.latched(), 10, 'each press reached the safety governor');
});
