// A fleet command flood against a real agent on a real mosquitto: e-stop socket latency during the flood against the idle baseline, tick lateness, the fleet estop behind the flood, RSS.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { spawn } from './bench.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt from 'mqtt';
import { startMosquitto } from '../../dist/test/support/mosquitto.js';
import { makeCommand } from '../../dist/src/fleet/protocol.js';
import { percentile, startAgent } from './agent.js';
import { prober } from './estop-prober.js';

const shipped = (f) => readFileSync(new URL(`../../systemd/mosquitto/${f}`, import.meta.url), 'utf8');
const round = (x, d = 1) => (x === undefined || x === null ? null : Math.round(x * 10 ** d) / 10 ** d);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Resident memory of a process in bytes (/proc). */
function rssOf(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Publishes each line as one QoS 1 message on r1's commands topic, in order, with mosquitto_pub; resolves when it exits. */
function publishLines(broker, lines) {
  return new Promise((resolve, reject) => {
    const pub = spawn(
      'mosquitto_pub',
      [
        '-h',
        '127.0.0.1',
        '-p',
        String(broker.port),
        '-V',
        '5',
        '-u',
        'operator',
        '-P',
        'pw-op-flood',
        '-i',
        'flood-pub',
        '-q',
        '1',
        '-t',
        'cortexd/r1/commands',
        '-l',
      ],
      { stdio: ['pipe', 'ignore', 'pipe'] },
    );
    let err = '';
    pub.stderr.setEncoding('utf8').on('data', (c) => (err += c));
    pub.on('error', reject);
    pub.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`mosquitto_pub exited with ${code}: ${err.slice(-300)}`))));
    pub.stdin.end(`${lines.join('\n')}\n`);
  });
}

function agentConfig(socket, brokerUrl, hertz) {
  return `{
    version: "v1.0.5", name: "flood", default_mode: "idle", allow_manual_switching: true, mode_memory_enabled: false,
    api_key: "", system_governance: "obey", service: { base_url: "embedded" },
    cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini" } },
    fleet: { url: "${brokerUrl}", username: "r1", robot_id: "r1", metrics_interval_seconds: 0 },
    modes: {
      idle: { display_name: "Idle", description: "d", system_prompt_base: "rest", hertz: ${hertz},
        agent_inputs: [{ type: "TextInput", config: { source: "socket", path: "${socket}", descriptor: "Voice" } }],
        agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }] },
    },
  }`;
}

/**
 * Floods robot `r1` with `commands` `say` commands (QoS 1, as fast as the operator's client sends
 * them), then sends one fleet `estop`. Measures, against an idle baseline of the same run: the e-stop
 * socket's STATUS round trip (p50/p99/max), tick lateness, the time from the estop's publish to its
 * reply and how many `say` replies came after it (the estop went first when most of them did), the
 * agent's peak RSS, and how many says were answered, refused and never answered.
 */
export async function fleetFlood(opts = {}) {
  const commands = opts.commands ?? 10_000;
  const hertz = opts.hertz ?? 10;
  const baselineMs = opts.baselineMs ?? 3000;
  const probeEveryMs = opts.probeEveryMs ?? 20;
  const target = { estop_socket_p99_ms: opts.targetP99Ms ?? 50 };
  const broker = await startMosquitto({
    users: { r1: 'pw-r1-flood', operator: 'pw-op-flood' },
    acl: shipped('cortexd.acl'),
    baseConf: shipped('cortexd.conf'),
  });
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-flood-'));
  const file = join(dir, 'flood.json5');
  writeFileSync(file, agentConfig(join(dir, 'in.sock'), broker.url, hertz));
  const runtime = opts.runtimeDir ?? join(dir, 'run');
  const agent = startAgent(file, join(dir, 'state'), { CORTEX_MQTT_PASSWORD: 'pw-r1-flood', CORTEX_RUNTIME_DIR: runtime, ...opts.agentEnv });
  const estopSocket = join(runtime, 'estop-flood.sock');
  const op = mqtt.connect(broker.url, { protocolVersion: 5, reconnectPeriod: 0, username: 'operator', password: 'pw-op-flood', clientId: 'flood-operator' });
  try {
    await new Promise((resolve, reject) => (op.once('connect', resolve), op.once('error', reject)));
    const replies = new Map();
    let replyCount = 0;
    op.on('message', (_topic, payload) => {
      const r = JSON.parse(payload.toString());
      replyCount += 1;
      replies.set(r.id, { ...r, n: replyCount, t: performance.now() });
    });
    await op.subscribeAsync({ 'cortexd/r1/replies': { qos: 1 } });
    await agent.waitFor((e) => e.type === 'fleet' && e.state === 'connected', 30_000, 'the fleet connected');
    await agent.waitFor((e) => e.type === 'tick', 30_000, 'the first tick');

    // The socket's thread may listen a little after the start: waited for (30 s hang guard).
    for (let i = 0; !existsSync(estopSocket) && i < 300; i++) await sleep(100);
    const ticksFrom = (i) => agent.events.slice(i).filter((e) => e.type === 'tick');
    const rss = { idle: rssOf(agent.child.pid), peak: 0 };
    const rssTimer = setInterval(() => (rss.peak = Math.max(rss.peak, rssOf(agent.child.pid))), 100);

    // Baseline: the idle agent.
    let mark = agent.events.length;
    const idleProbe = prober(estopSocket, probeEveryMs);
    await sleep(baselineMs);
    const idle = await idleProbe.stop();
    const idleTicks = ticksFrom(mark);

    // The flood, then the estop behind it.
    mark = agent.events.length;
    const floodProbe = prober(estopSocket, probeEveryMs);
    const says = Array.from({ length: commands }, (_, i) => makeCommand({ command: 'say', text: `flood ${i}` }, 120_000));
    const stop = makeCommand({ command: 'estop', reason: 'behind the flood' }, 120_000);
    const t0 = performance.now();
    // mosquitto_pub, one message per line, the estop last: another process floods, so this one stays
    // free to read the agent's events (a pipe left unread would stall the agent's stdout writes).
    await publishLines(
      broker,
      [...says, stop].map((c) => JSON.stringify(c)),
    );
    const sentMs = performance.now() - t0;
    const tStop = performance.now();
    const sentAt = Date.now();
    const deadline = Date.now() + (opts.settleMs ?? 60_000);
    while (!replies.has(stop.id) && Date.now() < deadline) await sleep(20);
    const stopReply = replies.get(stop.id);
    // Then until every say is answered or nothing more comes for 2 s.
    for (let last = -1, quiet = 0; quiet < 2000 && Date.now() < deadline && replies.size < commands + 1; ) {
      await sleep(200);
      quiet = replies.size === last ? quiet + 200 : 0;
      last = replies.size;
    }
    const flood = await floodProbe.stop();
    const floodTicks = ticksFrom(mark);
    clearInterval(rssTimer);

    const latch = agent.events.slice(mark).find((e) => e.type === 'safety' && e.kind === 'estop');
    const sayReplies = says.map((c) => replies.get(c.id)).filter(Boolean);
    const after = stopReply ? sayReplies.filter((r) => r.n > stopReply.n).length : 0;
    const lateness = (ts) => ({
      p50: round(
        percentile(
          ts.map((e) => e.lateness_ms),
          50,
        ),
      ),
      p99: round(
        percentile(
          ts.map((e) => e.lateness_ms),
          99,
        ),
      ),
      skipped: ts.reduce((n, e) => n + e.late_skipped, 0),
      ticks: ts.length,
      per_s: ts.length > 1 ? round((ts.length - 1) / ((ts.at(-1).at - ts[0].at) / 1000)) : null,
    });
    const stats = (xs) => ({ n: xs.length, p50: round(percentile(xs, 50), 2), p99: round(percentile(xs, 99), 2), max: round(Math.max(...xs), 2) });
    const refusedReasons = {};
    for (const r of sayReplies) if (!r.ok) refusedReasons[r.reason.replace(/\d+/g, 'N')] = (refusedReasons[r.reason.replace(/\d+/g, 'N')] ?? 0) + 1;
    const metrics = {
      commands,
      publish_ms: round(sentMs),
      estop_socket_ms: { idle: stats(idle), flood: stats(flood) },
      tick_lateness_ms: { idle: lateness(idleTicks), flood: lateness(floodTicks) },
      fleet_estop: {
        ok: stopReply?.ok ?? null,
        reply_ms: stopReply ? round(stopReply.t - tStop) : null,
        latched_ms_after_last_publish: latch ? latch.at - sentAt : null,
        say_replies_after_it: after,
        say_replies_before_it: stopReply ? sayReplies.length - after : null,
      },
      says: { answered: sayReplies.length, ok: sayReplies.filter((r) => r.ok).length, refused: refusedReasons, unanswered: commands - sayReplies.length },
      rss_mb: { idle: round(rss.idle / 1048576), peak: round(rss.peak / 1048576) },
    };
    const targetsMissed = [];
    if (!(metrics.estop_socket_ms.flood.p99 < target.estop_socket_p99_ms))
      targetsMissed.push(`e-stop socket p99 during the flood ${metrics.estop_socket_ms.flood.p99} ms >= ${target.estop_socket_p99_ms} ms`);
    if (!stopReply?.ok) targetsMissed.push('the fleet estop behind the flood was not honoured');
    return { metrics, targetsMissed };
  } finally {
    await op.endAsync().catch(() => {});
    await agent.stop().catch(() => {});
    await broker.stop();
  }
}
