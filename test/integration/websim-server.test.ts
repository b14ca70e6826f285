// WebSim server on port 0: snapshot on connect, live redacted events, commands, one server per agent, token and origin checks.
import t from 'tap';
import { get as httpGet } from 'node:http';
import { mkdtempSync, readFileSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { pino } from 'pino';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { AgentControl } from '../../src/cortex/contracts.js';
import { loadConfig } from '../../src/config/load.js';
import { WebSim } from '../../src/websim/server.js';
import { createWebSim } from '../../src/websim/plugin.js';
import { resolveWebSimOptions, WebSimError } from '../../src/websim/options.js';
import { SESSION_COOKIE } from '../../src/websim/auth.js';
import type { ServerMessage } from '../../src/websim/page/state.js';

const logger = pino({ level: 'silent' });
const TOKEN = 'correct-horse-battery-staple-42';

type Config = AgentControl['config'];

/** The media a stand-in agent previews: a camera frame (bytes as given) and a microphone level. */
interface StubMedia {
  frame?: { input: string; jpeg: Buffer; at: number };
  level?: { input: string; rms_dbfs: number; peak_dbfs: number; at: number };
}

/** A stand-in agent: real bus and config, records what the page asked for. */
function stubAgent(config: Config, opts: { switchOk?: boolean; media?: StubMedia } = {}) {
  const bus = new AgentBus();
  const calls = { texts: [] as string[], switches: [] as string[] };
  let mode = config.default_mode;
  const agent: AgentControl = {
    bus,
    configName: 'default',
    config,
    currentMode: () => mode,
    async switchMode(to) {
      calls.switches.push(to);
      if (opts.switchOk === false) return { ok: false, reason: 'no manual rule leads there' };
      bus.emit({ type: 'mode.changed', at: Date.now(), from: mode, to, trigger: 'manual', reason: 'manual switch from WebSim' });
      mode = to;
      return { ok: true };
    },
    pushText(text) {
      calls.texts.push(text);
      return true;
    },
    estop: () => {},
    release: async () => ({ ok: false, reason: 'no emergency stop is latched' }),
    safetyStatus: () => ({ estop: null, motion: 'still', stopping: false, faults: [] }),
    media: { frame: async () => opts.media?.frame, level: () => opts.media?.level },
  };
  return { agent, bus, calls };
}

/** Opens a socket and collects messages; `next(pred)` waits (with a timeout) for a matching one. */
async function client(url: string, headers: Record<string, string> = {}) {
  const ws = new WebSocket(url, { headers });
  const seen: ServerMessage[] = [];
  const waiters: Array<{ pred: (m: ServerMessage) => boolean; resolve: (m: ServerMessage) => void }> = [];
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as ServerMessage;
    seen.push(m);
    for (const w of [...waiters]) if (w.pred(m)) waiters.splice(waiters.indexOf(w), 1), w.resolve(m);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  const next = (pred: (m: ServerMessage) => boolean, ms = 5000) =>
    new Promise<ServerMessage>((resolve, reject) => {
      const found = seen.find(pred);
      if (found) return resolve(found);
      const timer = setTimeout(() => reject(new Error('timed out waiting for a message')), ms);
      waiters.push({ pred, resolve: (m) => (clearTimeout(timer), resolve(m)) });
    });
  return { ws, next, seen };
}

const loaded = await loadConfig({ name: 'default' });
/** Where the WebSims of this file keep their generated token. */
const stateDir = mkdtempSync(join(tmpdir(), 'cortexd-websim-state-'));
const generatedToken = () => readFileSync(join(stateDir, 'websim-token'), 'utf8').trim();

/** Proves the generated token on a page socket (the page's Unlock, or its #token= fragment). */
async function unlock(c: Awaited<ReturnType<typeof client>>, id = 900) {
  c.ws.send(JSON.stringify({ type: 'auth', id, token: generatedToken() }));
  return c.next((m) => m.type === 'reply' && m.id === id);
}
const secretConfig = {
  ...loaded.config,
  api_key: 'key_live_abcdefghijklmnopqrstuvwxyz012345',
  modes: {
    ...loaded.config.modes,
    idle: {
      ...loaded.config.modes.idle!,
      mcp_servers: [
        {
          name: 'tools',
          transport: 'sse' as const,
          url: 'http://localhost:1/sse',
          args: [],
          env: { SERVICE_PASS: 'hunter2hunter2' },
          headers: { 'X-Custom': 'hunter3hunter3' },
        },
      ],
    },
  },
} as Config;

t.test('a fresh socket gets a snapshot; events follow live, redacted; text and switches reach the agent', async (t) => {
  const { agent, bus, calls } = stubAgent(secretConfig);
  const sim = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent, logger, stateDir });
  t.teardown(() => sim.stop());
  await sim.start();
  const url = sim.url!;
  t.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);

  const c = await client(`${url.replace('http', 'ws')}events`);
  t.teardown(() => c.ws.close());
  const snap = await c.next((m) => m.type === 'snapshot');
  if (snap.type !== 'snapshot') throw new Error('unreachable');
  t.equal(snap.state.mode, 'idle');
  t.same(
    snap.meta.modes.map((m) => m.name),
    ['idle', 'conversation', 'sleep', 'explore'],
  );
  t.equal(snap.meta.allow_manual_switching, true);
  const sent = JSON.stringify(snap);
  t.notMatch(sent, /abcdefghijklmnop|hunter2|hunter3/, 'no secret of the config reaches the page');

  const answer: AgentEvent = {
    type: 'model.answer',
    at: Date.now(),
    mode: 'idle',
    tick: 3,
    model: 'gen-4o-mini',
    text: 'hi',
    tool_calls: [{ name: 'speak', arguments: { sentence: 'my key is key_live_zzzzzzzzzzzzzzzzzzzz' } }],
    latency_ms: 42,
    cost_cu: 0.5,
  };
  bus.emit(answer);
  const ev = await c.next((m) => m.type === 'event' && m.event.type === 'model.answer');
  t.notMatch(JSON.stringify(ev), /zzzzzzzz/, 'event strings are redacted');
  t.match(JSON.stringify(ev), /key_live_\[REDACTED\]/);

  const state = (await (await fetch(`${url}api/state`)).json()) as {
    state: { counters: { model_calls: number; cu_spent: number }; answer: { latency_ms: number } };
  };
  t.equal(state.state.counters.model_calls, 1, 'the server keeps the state for the next snapshot');
  t.equal(state.state.answer.latency_ms, 42);

  t.equal((statSync(join(stateDir, 'websim-token')).mode & 0o777).toString(8), '600', 'the generated token is kept 0600');
  t.match(await c.next((m) => m.type === 'access'), { authed: false }, 'a page opened without the token only watches');
  c.ws.send(JSON.stringify({ type: 'text', id: 11, text: 'let me in' }));
  t.match(await c.next((m) => m.type === 'reply' && m.id === 11), { ok: false, reason: /needs the WebSim token/ }, 'typing needs the token');
  c.ws.send(JSON.stringify({ type: 'mode.switch', id: 12, mode: 'sleep' }));
  t.match(await c.next((m) => m.type === 'reply' && m.id === 12), { ok: false, reason: /needs the WebSim token/ }, 'so does switching');
  t.same(calls.texts, [], 'nothing reached the agent');
  t.match(await unlock(c), { ok: true, reason: 'unlocked' });
  c.ws.send(JSON.stringify({ type: 'text', id: 13, text: 'x'.repeat(2001) }));
  t.match(await c.next((m) => m.type === 'reply' && m.id === 13), { ok: false, reason: 'line too long: 2001 characters, at most 2000' });

  c.ws.send(JSON.stringify({ type: 'text', id: 1, text: '  hello robot  ' }));
  const r1 = await c.next((m) => m.type === 'reply' && m.id === 1);
  t.match(r1, { ok: true });
  t.same(calls.texts, ['hello robot']);

  c.ws.send(JSON.stringify({ type: 'mode.switch', id: 2, mode: 'sleep' }));
  t.match(await c.next((m) => m.type === 'reply' && m.id === 2), { ok: true });
  const changed = await c.next((m) => m.type === 'event' && m.event.type === 'mode.changed');
  t.match(changed, { event: { from: 'idle', to: 'sleep', trigger: 'manual' } });
  t.same(calls.switches, ['sleep']);

  const late = await client(`${url.replace('http', 'ws')}events`);
  t.teardown(() => late.ws.close());
  t.match(
    await late.next((m) => m.type === 'snapshot'),
    { state: { mode: 'sleep', lastTransition: { from: 'idle', to: 'sleep' } } },
    'a page opened later sees the switch',
  );
});

t.test('media: a connected page gets the microphone level and news of a frame; /frame.jpg serves the frame, 204 without one', async (t) => {
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 1, 2, 3, 0xff, 0xd9]);
  const media: StubMedia = { level: { input: 'SpeechlabASRInput', rms_dbfs: -23.5, peak_dbfs: -6, at: 1000 } };
  const { agent } = stubAgent(loaded.config, { media });
  const sim = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent, logger, stateDir });
  t.teardown(() => sim.stop());
  await sim.start();
  const url = sim.url!;
  t.equal((await fetch(`${url}frame.jpg`)).status, 204, 'no frame yet');
  const c = await client(`${url.replace('http', 'ws')}events`);
  t.teardown(() => c.ws.close());
  const first = await c.next((m) => m.type === 'media' && m.media.level !== null);
  t.match(first, { media: { level: { input: 'SpeechlabASRInput', rms_dbfs: -23.5, peak_dbfs: -6 }, frame: null } });
  media.frame = { input: 'LocalVLMInput', jpeg, at: 2000 };
  await c.next((m) => m.type === 'media' && m.media.frame?.at === 2000, 5000);
  const res = await fetch(`${url}frame.jpg`);
  t.equal(res.status, 200);
  t.equal(res.headers.get('content-type'), 'image/jpeg');
  t.equal(res.headers.get('x-frame-input'), 'LocalVLMInput');
  t.same(Buffer.from(await res.arrayBuffer()), jpeg, 'the frame as the input gave it');
  t.equal((await fetch(`${url}frame.jpg`, { headers: { Origin: 'http://evil.example' } })).status, 403, 'the frame is guarded like every route');
});

t.test('a malformed message closes the socket with 1008', async (t) => {
  const { agent } = stubAgent(loaded.config);
  const sim = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent, logger, stateDir });
  t.teardown(() => sim.stop());
  await sim.start();
  const c = await client(`${sim.url!.replace('http', 'ws')}events`);
  const closed = new Promise<number>((resolve) => c.ws.once('close', (code) => resolve(code)));
  c.ws.send(JSON.stringify({ type: 'mode.switch', id: 1, mode: 'sleep', extra: 'field' }));
  t.equal(await closed, 1008);
});

t.test('with manual switching off, the switch is refused with the reason and never reaches the agent', async (t) => {
  const { agent, calls } = stubAgent({ ...loaded.config, allow_manual_switching: false });
  const sim = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent, logger, stateDir });
  t.teardown(() => sim.stop());
  await sim.start();
  const c = await client(`${sim.url!.replace('http', 'ws')}events`);
  t.teardown(() => c.ws.close());
  t.match(await c.next((m) => m.type === 'snapshot'), { meta: { allow_manual_switching: false, manual_disabled_reason: /allow_manual_switching is false/ } });
  await unlock(c);
  c.ws.send(JSON.stringify({ type: 'mode.switch', id: 7, mode: 'sleep' }));
  t.match(await c.next((m) => m.type === 'reply' && m.id === 7), { id: 7, ok: false, reason: /allow_manual_switching is false/ });
  t.same(calls.switches, []);
});

t.test('start() twice is one server; stop() twice is fine; a stopped WebSim does not restart', async (t) => {
  const { agent } = stubAgent(loaded.config);
  const sim = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent, logger, stateDir });
  const a = sim.start();
  const b = sim.start();
  t.equal(a, b, 'the same start promise');
  await Promise.all([a, b]);
  const url = sim.url!;
  t.equal((await fetch(url)).status, 200);
  await Promise.all([sim.stop(), sim.stop()]);
  await t.rejects(fetch(url), 'nothing listens after stop');
  await t.rejects(sim.start(), WebSimError);
});

t.test('a taken port is a WebSimError naming the address', async (t) => {
  const { agent } = stubAgent(loaded.config);
  const first = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent, logger, stateDir });
  t.teardown(() => first.stop());
  await first.start();
  const port = Number(new URL(first.url!).port);
  const second = new WebSim(resolveWebSimOptions({ port }, {}), { agent, logger, stateDir });
  t.teardown(() => second.stop());
  await t.rejects(second.start(), { name: 'WebSimError', message: new RegExp(`127\\.0\\.0\\.1:${port}.*in use`) });
});

t.test('a non-loopback host without a token never listens: the plugin handle refuses to start', async (t) => {
  const { agent } = stubAgent(loaded.config);
  delete process.env.CORTEX_WEBSIM_TOKEN;
  for (const host of ['0.0.0.0', '::', '192.168.1.10', 'robot.local']) {
    const handle = createWebSim({ host, port: 0 }, { agent, logger, stateDir });
    await t.rejects(
      handle.start(),
      { name: 'WebSimError', code: 'websim_unsafe_bind', message: new RegExp(`refuses to bind ${host.replace(/\./g, '\\.')}`) },
      host,
    );
    await handle.stop();
  }
});

t.test('with a token, every request and socket needs it (header, query then cookie); Host and Origin are checked', async (t) => {
  const { agent } = stubAgent(loaded.config);
  const sim = new WebSim(resolveWebSimOptions({ port: 0, token: TOKEN }, {}), { agent, logger, stateDir });
  t.teardown(() => sim.stop());
  await sim.start();
  const url = sim.url!;
  const ws = url.replace('http', 'ws');

  for (const path of ['', 'api/state', 'graph.svg', 'static/app.js', 'style.css']) {
    t.equal((await fetch(`${url}${path}`)).status, 401, `/${path} without token`);
    t.equal((await fetch(`${url}${path}`, { headers: { authorization: 'Bearer wrong-token-wrong-token' } })).status, 401, `/${path} wrong token`);
  }
  t.equal((await fetch(`${url}api/state`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
  t.equal((await fetch(`${url}api/state`, { headers: { 'x-websim-token': TOKEN } })).status, 200);
  t.equal((await fetch(`${url}api/state?token=${TOKEN}`)).status, 200);

  const entry = await fetch(`${url}?token=${encodeURIComponent(TOKEN)}`, { redirect: 'manual' });
  t.equal(entry.status, 303, 'the token leaves the address bar');
  t.equal(entry.headers.get('location'), '/');
  const cookie = entry.headers.get('set-cookie') ?? '';
  t.match(cookie, new RegExp(`^${SESSION_COOKIE}=[^;]+; Path=/; HttpOnly; SameSite=Strict`));
  t.notMatch(cookie, TOKEN, 'the cookie is not the token');
  const session = cookie.split(';')[0]!;
  const page = await fetch(url, { headers: { cookie: session } });
  t.equal(page.status, 200);
  const html = await page.text();
  t.notMatch(html, TOKEN, 'the page never holds the token');
  t.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);

  await t.rejects(client(`${ws}events`), /HTTP 401/, 'socket without token');
  await t.rejects(client(`${ws}events?token=nope-nope-nope-nope`), /HTTP 401/);
  const viaCookie = await client(`${ws}events`, { cookie: session });
  t.match(await viaCookie.next((m) => m.type === 'snapshot'), { type: 'snapshot' });
  viaCookie.ws.close();
  const viaQuery = await client(`${ws}events?token=${TOKEN}`);
  viaQuery.ws.close();

  await t.rejects(client(`${ws}events`, { cookie: session, origin: 'http://evil.example' }), /HTTP 403/, 'another site cannot open the socket');
  // fetch() cannot set Host; node:http can, as a browser on a rebound DNS name would send it.
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpGet(
      `${url}api/state`,
      { headers: { 'x-websim-token': TOKEN, host: 'evil.example:8000' } },
      (res) => (res.resume(), resolve(res.statusCode ?? 0)),
    );
    req.on('error', reject);
  });
  t.equal(status, 403, 'a DNS-rebound Host is refused on a loopback bind');
});
