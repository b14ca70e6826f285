// Lock-out attacks of another local user on the robot's servers: the robot's model calls and the page's e-stop under each, beside the quiet baseline.
import { spawnSync } from 'node:child_process';
import { spawn } from './bench.js';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '..', '..');
const dist = (p) => pathToFileURL(join(ROOT, 'dist', p)).href;
const TOKEN = 'Xk2-pQ9_vR4mT7wZs1nB8cY3';

/** The attacks, as the audit ran them: each keeps its connections (re-opening any the server closes) until stdin closes. */
export const LOCKOUT_ATTACKS = ['idle_page_sockets', 'slow_service_conns', 'slow_metrics_conns', 'token_guesses'];

const ATTACKER = String.raw`
import { connect } from 'node:net';
import { request } from 'node:http';
const [attack, web, service, metrics, token] = process.argv.slice(2);
let stopping = false;
const raw = {
  idle_page_sockets: { port: +web, n: 40, bytes: (p) => 'GET /events HTTP/1.1\r\nHost: 127.0.0.1:' + p + '\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nCookie: cortexd_websim=guessed\r\n\r\n' },
  slow_service_conns: { port: +service, n: 300, bytes: (p) => 'POST /api/core/provider_a/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:' + p + '\r\n' },
  slow_metrics_conns: { port: +metrics, n: 16, bytes: () => 'GET /metrics HTTP/1.1\r\nHo' },
}[attack];
let opened = 0;
function hold(tg) {
  if (stopping) return;
  const s = connect(tg.port, '127.0.0.1');
  s.on('error', () => undefined);
  s.once('connect', () => (opened++, s.write(tg.bytes(tg.port))));
  s.once('close', () => setTimeout(() => hold(tg), 200));
}
let guesses = 0;
function guess(i) {
  if (stopping) return;
  const req = request({ host: '127.0.0.1', port: +token, path: '/api/state', localAddress: '127.0.' + (1 + ((i >> 7) & 127)) + '.' + (2 + (i % 128)),
    headers: { 'x-websim-token': 'wrong-guess-' + i + '-wrong-guess' } }, (res) => (res.resume(), guesses++, guess(i + 8)));
  req.on('error', () => setTimeout(() => guess(i + 8), 50));
  req.end();
}
if (raw) for (let i = 0; i < raw.n; i++) hold(raw);
else for (let i = 0; i < 8; i++) guess(i);
setTimeout(() => console.log('ready'), 1500);
process.stdin.on('data', () => undefined);
process.stdin.on('end', () => { stopping = true; console.log(JSON.stringify({ opened, guesses })); process.exit(0); });
`;

/**
 * A second local user: `nobody`, which every Debian system has (the tests and benches run as root and
 * become it with setpriv); undefined when not root or without setpriv. No user is created: the test
 * command changes nothing on the machine.
 */
function otherUser() {
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v setpriv']).status !== 0) return undefined;
  const id = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  if (id.status !== 0) return undefined;
  return { uid: Number(id.stdout.trim()), gid: Number(spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).stdout.trim()) };
}

function get(url, headers = {}) {
  return new Promise((resolve) => {
    const req = request(url, { headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, cookie: res.headers['set-cookie']?.[0]?.split(';')[0] }));
    });
    req.on('error', () => resolve({ status: 0 }));
    req.end();
  });
}

/** One e-stop press from a fresh page socket (the page's cookie), as the page does on reconnect; resolves with its latency or undefined. */
async function pressEstop(WebSocket, wsUrl, cookie, id) {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const ws = new WebSocket(wsUrl, { headers: { cookie } });
    const timer = setTimeout(() => (ws.terminate(), resolve(undefined)), 10_000);
    ws.on('error', () => (clearTimeout(timer), resolve(undefined)));
    ws.on('open', () => ws.send(JSON.stringify({ type: 'estop', id })));
    ws.on('message', (d) => {
      const m = JSON.parse(String(d));
      if (m.type !== 'reply' || m.id !== id) return;
      clearTimeout(timer);
      ws.close();
      resolve(m.ok ? performance.now() - t0 : undefined);
    });
  });
}

function stats(xs) {
  if (xs.length === 0) return { n: 0 };
  const s = [...xs].sort((a, b) => a - b);
  const at = (q) => s[Math.min(s.length - 1, Math.floor(q * s.length))];
  return { n: s.length, p50_ms: +at(0.5).toFixed(1), p99_ms: +at(0.99).toFixed(1), max_ms: +s[s.length - 1].toFixed(1) };
}

/**
 * Runs the quiet baseline and each attack; returns the figures and the misses against the targets:
 * every robot call and every e-stop press served, robot-call p99 at most twice the quiet one.
 */
export async function lockoutBench({ quick }) {
  const { startService } = await import(dist('src/service/index.js'));
  const { WebSim } = await import(dist('src/websim/server.js'));
  const { resolveWebSimOptions } = await import(dist('src/websim/options.js'));
  const { Metrics, MetricsServer } = await import(dist('src/metrics/prometheus.js'));
  const { AgentBus } = await import(dist('src/cortex/events.js'));
  const { loadConfig } = await import(dist('src/config/load.js'));
  const { default: WebSocket } = await import('ws');
  const { pino } = await import('pino');
  const logger = pino({ level: 'silent' });
  const { config } = await loadConfig({ name: 'default' });
  let latched = null;
  const agent = {
    bus: new AgentBus(),
    configName: 'default',
    config,
    currentMode: () => config.default_mode,
    switchMode: async () => ({ ok: false, reason: 'bench' }),
    pushText: () => false,
    estop: (reason, source) => (latched = { reason, source, at: Date.now() }),
    release: () => ({ ok: false, reason: 'bench' }),
    safetyStatus: () => ({ estop: latched, motion: 'still', stopping: false, faults: [] }),
    media: { frame: async () => undefined, level: () => undefined },
  };
  const state = mkdtempSync(join(tmpdir(), 'cortexd-bench-lockout-'));
  const open = new WebSim(resolveWebSimOptions({ port: 0 }, {}), { agent, logger, stateDir: state });
  const tokened = new WebSim(resolveWebSimOptions({ port: 0, token: TOKEN }, {}), { agent, logger, stateDir: state });
  await open.start();
  await tokened.start();
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'b'.repeat(40), logger });
  const robotKey = svc.admin.createApiKey('robot').apiKey;
  const metrics = new MetricsServer(new Metrics(), { port: 0 });
  const scrape = (await metrics.start()).url;
  const landing = await get(`${tokened.url}?token=${TOKEN}`, { host: new URL(tokened.url).host });
  const cookie = landing.cookie;
  const wsUrl = `${tokened.url.replace('http', 'ws')}events`;
  const calls = quick ? 8 : 60;
  const presses = quick ? 3 : 20;
  const loads = quick ? 3 : 5;

  const robotCall = async () => {
    const t0 = performance.now();
    const res = await fetch(`${svc.url}/api/core/provider_a/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${robotKey}` },
      body: JSON.stringify({ model: 'gen-5-nano', messages: [{ role: 'user', content: 'Voice: hello robot' }] }),
    }).catch(() => undefined);
    await res?.arrayBuffer();
    return res?.status === 200 ? performance.now() - t0 : undefined;
  };
  const measure = async () => {
    const callMs = [];
    let callsServed = 0;
    for (let i = 0; i < calls; i++) {
      const ms = await robotCall();
      if (ms !== undefined) callsServed++, callMs.push(ms);
    }
    let pressesServed = 0;
    const pressMs = [];
    for (let i = 0; i < presses; i++) {
      const ms = await pressEstop(WebSocket, wsUrl, cookie, i);
      if (ms !== undefined) pressesServed++, pressMs.push(ms);
    }
    let pages = 0;
    let scrapes = 0;
    for (let i = 0; i < loads; i++) if ((await get(open.url)).status === 200) pages++;
    for (let i = 0; i < loads; i++) if ((await get(scrape)).status === 200) scrapes++;
    return {
      robot_calls: { served: callsServed, of: calls, ...stats(callMs) },
      estop_presses: { served: pressesServed, of: presses, ...stats(pressMs) },
      page_loads: { served: pages, of: loads },
      scrapes: { served: scrapes, of: loads },
    };
  };

  for (let i = 0; i < 5; i++) await robotCall();
  const result = { quiet: await measure(), attacks: {}, attacker: 'this user' };
  const user = otherUser();
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-bench-attacker-'));
  chmodSync(dir, 0o755);
  writeFileSync(join(dir, 'attack.mjs'), ATTACKER, { mode: 0o644 });
  if (user) result.attacker = `local user ${user.uid}`;
  const ports = [open.url, svc.url, scrape, tokened.url].map((u) => new URL(u).port);
  for (const name of LOCKOUT_ATTACKS) {
    const args = [join(dir, 'attack.mjs'), name, ...ports];
    const child = user
      ? // `env -u NODE_OPTIONS`: a test runner's loader in it (a file of a checkout the other user may not read) would stop node.
        spawn('setpriv', [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', 'env', '-u', 'NODE_OPTIONS', process.execPath, ...args], {
          cwd: dir,
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
        })
      : spawn(process.execPath, args, { cwd: dir, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir } });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    await new Promise((resolve) => {
      const check = setInterval(() => out.includes('ready') && (clearInterval(check), resolve()), 50);
      child.once('exit', () => (clearInterval(check), resolve()));
    });
    const figures = await measure();
    child.stdin.end();
    // An attacker that already ended (it could not start) has no exit left to wait for.
    if (child.exitCode === null && child.signalCode === null) await new Promise((resolve) => child.once('exit', resolve));
    const last = out.trim().split('\n').at(-1);
    result.attacks[name] = { ...figures, attacker: last?.startsWith('{') ? JSON.parse(last) : out.trim() };
  }
  rmSync(dir, { recursive: true, force: true });
  await open.stop();
  await tokened.stop();
  await metrics.stop();
  await svc.close();
  rmSync(state, { recursive: true, force: true });

  const missed = [];
  const quietP99 = result.quiet.robot_calls.p99_ms;
  for (const [name, a] of Object.entries(result.attacks)) {
    if (a.robot_calls.served < a.robot_calls.of) missed.push(`${name}: ${a.robot_calls.served}/${a.robot_calls.of} robot calls`);
    if (a.estop_presses.served < a.estop_presses.of) missed.push(`${name}: ${a.estop_presses.served}/${a.estop_presses.of} e-stop presses`);
    if (a.robot_calls.p99_ms > 2 * quietP99) missed.push(`${name}: robot call p99 ${a.robot_calls.p99_ms} ms > 2x quiet ${quietP99} ms`);
  }
  if (!user) missed.push('no second local user (run as root with setpriv): the attacks ran as this user');
  return { result, missed };
}
