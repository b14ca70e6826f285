// Benchmark (long form of the CI switch-storm test): the default agent, every mode switched in random order at random intervals (5 ms to 1 s) through WebSim, typed keywords and timeouts; crashes, leaks and memory.
// Usage: node bench/switch-storm.js [--minutes 5] [--seed N]   (after npm run build)
import { mkdtempSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STORM_MODES, STORM_PHRASES, runSwitchStorm, settleIn, stormConfig } from '../dist/test/support/switch-storm.js';
import { metricSample, procStats } from '../dist/test/support/proc-stats.js';
import { seededRandom } from '../dist/test/support/fault-proxy.js';
import { freePort, startAgent } from './lib/agent.js';
import { finish, option, quick } from './lib/bench.js';

const MINUTES = option('minutes', 5, 0.05);
const SEED = option('seed', 13);

const scrape = (port) =>
  new Promise((resolve, reject) =>
    get(`http://127.0.0.1:${port}/metrics`, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    }).on('error', reject),
  );

/**
 * A sample taken in sleep (the one mode without a timeout) after 3 s there, so every sample compares the same mode. The heap is the
 * lowest of 10 readings over 2 s: the floor between two collections, not wherever the last one left it.
 */
async function sample(pid, metricsPort, websim) {
  await settleIn(websim, 'sleep', quick ? 500 : 3000);
  let heap = Infinity;
  for (let i = 0; i < (quick ? 2 : 10); i++) {
    heap = Math.min(heap, metricSample(await scrape(metricsPort), 'cortexd_nodejs_heap_size_used_bytes') ?? Infinity);
    await new Promise((r) => setTimeout(r, 200));
  }
  const p = procStats(pid);
  return { rss_mb: p.rssMb, heap_mb: Math.round((heap ?? 0) / 1e5) / 10, fds: p.fdTotal, fd_kinds: p.fds, threads: p.threads, children: p.children };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-storm-'));
  const [websim, metricsPort] = [await freePort(), await freePort()];
  const config = stormConfig(dir, websim);
  const agent = startAgent(config, join(dir, 'state'), { CORTEX_METRICS_PORT: String(metricsPort) });
  const { child } = agent;
  let exit;
  child.on('exit', (code, signal) => (exit = { code, signal }));
  await agent.waitFor((e) => e.type === 'tick', 30_000, 'the first tick');
  const random = seededRandom(SEED);
  const total = MINUTES * 60_000;
  const storm = (tenths) =>
    runSwitchStorm({
      port: websim,
      durationMs: (total * tenths) / 10,
      minGapMs: 5,
      maxGapMs: 1000,
      modes: STORM_MODES,
      phrases: STORM_PHRASES,
      random,
      stopped: () => !!exit,
    });
  // Warm-up (the first tenth), then the middle and end samples.
  const warm = await storm(1);
  const start = await sample(child.pid, metricsPort, websim);
  const first = await storm(4);
  const middle = exit ? undefined : await sample(child.pid, metricsPort, websim);
  const second = await storm(5);
  const end = exit ? undefined : await sample(child.pid, metricsPort, websim);
  if (!exit) child.kill('SIGTERM');
  await new Promise((r) => (exit ? r() : child.on('exit', r)));
  const crashed = /Fatal error|Check failed|Segmentation fault|core dumped/.test(agent.stderr()) || !(exit.code === 0);
  const merge = (...rs) =>
    rs.reduce(
      (a, r) => ({
        switches: a.switches + r.switches,
        typed: a.typed + r.typed,
        changes: a.changes + r.modeChanges,
        refused: a.refused + r.refused,
        unexplained: a.unexplained + r.unexplained,
      }),
      { switches: 0, typed: 0, changes: 0, refused: 0, unexplained: 0 },
    );
  const totals = merge(warm, first, second);
  const triggers = {};
  const reasons = {};
  for (const r of [warm, first, second]) {
    for (const [k, v] of Object.entries(r.triggers)) triggers[k] = (triggers[k] ?? 0) + v;
    for (const [k, v] of Object.entries(r.reasons)) reasons[k] = (reasons[k] ?? 0) + v;
  }
  const heapGrowth = middle && end ? (end.heap_mb - middle.heap_mb) / middle.heap_mb : undefined;
  const rssGrowth = middle && end ? (end.rss_mb - middle.rss_mb) / middle.rss_mb : undefined;
  const result = {
    minutes: MINUTES,
    seed: SEED,
    exit,
    crashed,
    totals,
    triggers,
    refusal_reasons: reasons,
    samples: { start, middle, end },
    heap_growth_middle_to_end: heapGrowth,
    rss_growth_middle_to_end: rssGrowth,
  };
  console.log(JSON.stringify(result, null, 2));
  const missed = [];
  if (crashed) missed.push(`the agent died (${JSON.stringify(exit)})`);
  if (totals.unexplained > 0) missed.push(`${totals.unexplained} refusals without a reason`);
  if (heapGrowth !== undefined && heapGrowth > 0.1) missed.push(`heap grew ${(heapGrowth * 100).toFixed(1)} % from middle to end`);
  if (rssGrowth !== undefined && rssGrowth > 0.1) missed.push(`RSS grew ${(rssGrowth * 100).toFixed(1)} % from middle to end`);
  if (start && end && end.fds > start.fds + 5) missed.push(`descriptors ${start.fds} -> ${end.fds}`);
  const summary = `switch storm ${MINUTES} min: ${totals.switches} switches and ${totals.typed} typed lines sent, ${totals.changes} mode changes (${Object.entries(
    triggers,
  )
    .map(([k, v]) => `${k} ${v}`)
    .join(
      ', ',
    )}), ${totals.refused} refused with a reason; RSS ${middle?.rss_mb}->${end?.rss_mb} MB, heap ${middle?.heap_mb}->${end?.heap_mb} MB, fds ${start?.fds}->${end?.fds}; crashes ${crashed ? 1 : 0}`;
  console.log(missed.length ? `${summary} — MISSED target: ${missed.join('; ')}` : `${summary} — within target`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await main();
  await finish(0);
}
