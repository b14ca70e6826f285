// The WebSim flood of issue 23: agent RSS through a typing flood (and pages that never read) against its idle baseline, and the e-stop socket's latency meanwhile.
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import { freePort, percentile, startAgent } from './agent.js';
import { prober } from './estop-prober.js';

const ROOT = join(import.meta.dirname, '..', '..');
/** Targets: the audit's memory ceiling, and the e-stop path's p99 (as for the fleet flood). */
export const RSS_TARGET_MB = 400;
export const ESTOP_P99_TARGET_MS = 50;

const rssMb = (pid) => {
  const m = /^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 102.4) / 10 : 0;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const round = (x) => (x === undefined ? null : Math.round(x * 100) / 100);

/**
 * Runs the default agent (its WebSim on a free port), measures its idle RSS and e-stop socket latency,
 * then for `seconds` types `lineLength`-character lines at `rateHz` through WebSim with the token
 * while `silentPages` pages upgrade and never read. Returns `{ metrics, targetsMissed }`.
 */
export async function websimFlood(opts = {}) {
  const seconds = opts.seconds ?? 40;
  const idleSeconds = opts.idleSeconds ?? 5;
  const rateHz = opts.rateHz ?? 10;
  const lineLength = opts.lineLength ?? 2000;
  const silentPages = opts.silentPages ?? 600;
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-websim-flood-'));
  const port = await freePort();
  const text = readFileSync(join(ROOT, 'config', 'default.json5'), 'utf8').replaceAll(
    'simulators: [{ type: "WebSim" }]',
    `simulators: [{ type: "WebSim", config: { port: ${port} } }]`,
  );
  const config = join(dir, 'default.json5');
  writeFileSync(config, text);
  cpSync(join(ROOT, 'config', 'media'), join(dir, 'media'), { recursive: true });
  cpSync(join(ROOT, 'config', 'hooks'), join(dir, 'hooks'), { recursive: true });
  const state = join(dir, 'state');
  const agent = startAgent(config, state, { CORTEX_RUNTIME_DIR: join(dir, 'run') });
  const silent = [];
  let probe;
  let ws;
  try {
    const ready = await agent.waitFor((e) => e.type === 'simulator.ready', 60_000, 'WebSim listening');
    await agent.waitFor((e) => e.type === 'agent.started', 60_000, 'agent.started');
    // The socket's thread may listen a little after agent.started: waited for (30 s hang guard).
    let sockName;
    for (let i = 0; !sockName && i < 300; i++) {
      sockName = existsSync(join(dir, 'run')) ? readdirSync(join(dir, 'run')).find((f) => f.startsWith('estop-') && f.endsWith('.sock')) : undefined;
      if (!sockName) await sleep(100);
    }
    if (!sockName) throw new Error('the agent opened no e-stop socket');
    const pid = agent.child.pid;
    const sockPath = join(dir, 'run', sockName);
    // Probed from a worker thread (bench/lib/estop-prober.js): this thread is busy with the flood.
    probe = prober(sockPath, 50);
    await sleep(idleSeconds * 1000);
    const idle = await probe.stop();
    probe = undefined;
    const baseline = rssMb(pid);

    const token = readFileSync(ready.token_file, 'utf8').trim();
    ws = new WebSocket(`ws://127.0.0.1:${port}/events?token=${encodeURIComponent(token)}`);
    await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
    const replies = { ok: 0, refused: 0 };
    ws.on('message', (d) => {
      const m = JSON.parse(String(d));
      if (m.type === 'reply') replies[m.ok ? 'ok' : 'refused'] += 1;
    });
    for (let i = 0; i < silentPages; i++) {
      const s = connect(port, '127.0.0.1');
      s.on('error', () => undefined);
      s.write(
        `GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      s.pause();
      silent.push(s);
    }
    probe = prober(sockPath, 50);
    const filler = 'robot please repeat after me '.repeat(Math.ceil(lineLength / 29) + 1);
    let peak = baseline;
    let sent = 0;
    const end = Date.now() + seconds * 1000;
    const rssTrace = [];
    while (Date.now() < end) {
      sent += 1;
      ws.send(JSON.stringify({ type: 'text', id: sent, text: `${sent} ${filler}`.slice(0, lineLength) }));
      const r = rssMb(pid);
      peak = Math.max(peak, r);
      if (sent % rateHz === 0) rssTrace.push(r);
      await sleep(1000 / rateHz);
    }
    // After the flood: what was queued plays out; memory must not keep climbing.
    for (let i = 0; i < 10; i++) {
      peak = Math.max(peak, rssMb(pid));
      await sleep(300);
    }
    const after = rssMb(pid);
    const speech = agent.events.filter((e) => e.type === 'action' && e.label === 'speak');
    const websimDrops = agent.events.filter((e) => e.type === 'error' && e.source === 'websim').at(-1)?.message ?? null;
    const flood = await probe.stop();
    probe = undefined;
    const metrics = {
      flood_seconds: seconds,
      lines_sent: sent,
      line_length: lineLength,
      replies,
      silent_pages: silentPages,
      rss_mb: { idle_baseline: baseline, peak, after_flood: after, per_second: rssTrace, target_peak: RSS_TARGET_MB },
      speech_queue: {
        max_waiting: Math.max(0, ...speech.map((e) => e.queue ?? 0)),
        dropped_queue_full: speech.filter((e) => e.state === 'dropped' && /queue full/.test(e.error ?? '')).length,
        overflowed: Math.max(0, ...speech.map((e) => e.overflowed ?? 0)),
      },
      websim_page_drops: websimDrops,
      estop_socket_ms: {
        idle: { n: idle.length, p50: round(percentile(idle, 50)), p99: round(percentile(idle, 99)), max: round(Math.max(0, ...idle)) },
        flood: { n: flood.length, p50: round(percentile(flood, 50)), p99: round(percentile(flood, 99)), max: round(Math.max(0, ...flood)) },
        target_p99: ESTOP_P99_TARGET_MS,
      },
    };
    const targetsMissed = [];
    if (peak >= RSS_TARGET_MB) targetsMissed.push(`websim flood: agent RSS peak ${peak} MB >= ${RSS_TARGET_MB} MB`);
    const p99 = metrics.estop_socket_ms.flood.p99;
    if (p99 === null || p99 >= ESTOP_P99_TARGET_MS) targetsMissed.push(`websim flood: e-stop socket p99 ${p99} ms >= ${ESTOP_P99_TARGET_MS} ms`);
    return { metrics, targetsMissed };
  } finally {
    await probe?.stop();
    ws?.close();
    for (const s of silent) s.destroy();
    await agent.stop();
  }
}
