// Benchmark: a soak of the default agent in explore against a faulty peer of the hosted API (random socket cuts, garbage and error events, info restarts, chat 503/429 bursts, slow answers).
// Usage: node bench/soak.js [--minutes 60] [--seed N]   (after npm run build; the first minute is fault-free: the baseline)
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../dist/src/service/index.js';
import { createLogger } from '../dist/src/log.js';
import { seededRandom, startFaultProxy } from '../dist/test/support/fault-proxy.js';
import { metricSample, procStats } from '../dist/test/support/proc-stats.js';
import { freePort, startAgent } from './lib/agent.js';
import { finish, option, quick } from './lib/bench.js';

const ROOT = join(import.meta.dirname, '..');
const MINUTES = option('minutes', 60, 2);
const SEED = option('seed', 21);
/** A period of the soak: a minute; `--quick` runs two periods of 5 s (the same phases and samples, figures per period). */
const MINUTE = quick ? 5000 : 60_000;

const scrape = (port) =>
  new Promise((resolve, reject) =>
    get(`http://127.0.0.1:${port}/metrics`, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    }).on('error', reject),
  );

/** The faults of each phase, in turn (two minutes each after the fault-free first minute). */
const PHASES = [
  { name: 'random cuts', script: { randomCut: { minMs: 500, maxMs: 8000 } } },
  { name: 'garbage, errors and info restarts', script: { garbageEveryMs: 700, infoEveryMs: 4000 } },
  {
    name: 'chat 503/429 bursts and slow answers',
    script: {
      chatDelayMs: 2500,
      chatFailures: [
        { status: 503, error: 'Failed to connect to provider_a server' },
        { status: 503, error: 'Failed to connect to provider_a server' },
        { status: 429, error: 'Too many requests', retryAfterS: 1 },
      ],
    },
  },
  { name: 'everything at once', script: { randomCut: { minMs: 500, maxMs: 6000 }, garbageEveryMs: 1500, infoEveryMs: 5000, chatDelayMs: 1500 } },
];

/** The shipped default configuration, in explore for good (a one-day timeout), every hosted address through the proxy. */
function soakConfig(dir, proxy, apiKey, websim) {
  let text = readFileSync(join(ROOT, 'config', 'default.json5'), 'utf8')
    .replaceAll('simulators: [{ type: "WebSim" }]', `simulators: [{ type: "WebSim", config: { port: ${websim} } }]`)
    .replace('default_mode: "idle"', 'default_mode: "explore"')
    .replace('mode_memory_enabled: true', 'mode_memory_enabled: false')
    .replace('timeout_seconds: 60,', 'timeout_seconds: 86400,')
    .replace('api_key: "${OM_API_KEY:-openmind_free}"', `api_key: "${apiKey}"`);
  text = text.replace(
    /service: \{[^}]*\}/,
    `service: { base_url: "${proxy.url}", ws_base_url: "${proxy.wsUrl}", asr_ws_url: "${proxy.wsUrl}/asr", vlm_ws_url: "${proxy.wsUrl}/vlm" }`,
  );
  writeFileSync(join(dir, 'default.json5'), text);
  cpSync(join(ROOT, 'config', 'media'), join(dir, 'media'), { recursive: true });
  cpSync(join(ROOT, 'config', 'hooks'), join(dir, 'hooks'), { recursive: true });
  return join(dir, 'default.json5');
}

async function sample(pid, metricsPort, proxy) {
  let heap = Infinity;
  let text = '';
  for (let i = 0; i < 10; i++) {
    text = await scrape(metricsPort);
    heap = Math.min(heap, metricSample(text, 'cortexd_nodejs_heap_size_used_bytes') ?? Infinity);
    await new Promise((r) => setTimeout(r, 200));
  }
  const p = procStats(pid);
  const s = proxy.stats();
  let modelCalls = 0;
  for (const line of text.split('\n')) if (line.startsWith('cortexd_model_latency_seconds_count')) modelCalls += Number(line.slice(line.lastIndexOf(' ') + 1));
  let modelErrors = 0;
  for (const line of text.split('\n')) if (line.startsWith('cortexd_model_errors_total{')) modelErrors += Number(line.slice(line.lastIndexOf(' ') + 1));
  let cu = 0;
  for (const line of text.split('\n')) if (line.startsWith('cortexd_cu_spent_total{')) cu += Number(line.slice(line.lastIndexOf(' ') + 1));
  return {
    rss_mb: p.rssMb,
    heap_mb: Math.round(heap / 1e5) / 10,
    fds: p.fdTotal,
    audio_bytes: s.audioBytes,
    frames: s.frames,
    asr_sockets: s.sockets.speechlab.opened,
    model_calls: modelCalls,
    model_errors: modelErrors,
    cu: Math.round(cu * 10) / 10,
  };
}

async function main() {
  const logger = createLogger({ level: 'silent' });
  const svc = await startService({ port: 0, dbPath: ':memory:', logger, jwtSecret: 's'.repeat(32) });
  const { apiKey } = svc.admin.createApiKey('soak');
  svc.admin.setCredits('soak', { prepaid: 10_000_000 });
  const random = seededRandom(SEED);
  const proxy = await startFaultProxy({ target: svc.url, script: {}, random });
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-soak-'));
  const [websim, metricsPort] = [await freePort(), await freePort()];
  const config = soakConfig(dir, proxy, apiKey, websim);
  const agent = startAgent(config, join(dir, 'state'), { CORTEX_LOG_LEVEL: 'error', CORTEX_METRICS_PORT: String(metricsPort) });
  const { child } = agent;
  let exit;
  child.on('exit', (code, signal) => (exit = { code, signal }));
  const wait = (ms) => new Promise((r) => setTimeout(r, ms));

  // The baseline minute starts once speech recognition streams.
  await agent.waitFor((e) => e.type === 'stream' && e.kind === 'asr' && e.state === 'streaming', 60_000, 'the speech socket streaming');
  // Minute 1, fault-free: the baseline of audio delivered.
  const b0 = await sample(child.pid, metricsPort, proxy);
  await wait(MINUTE);
  const b1 = await sample(child.pid, metricsPort, proxy);
  const baselineAudioPerMin = b1.audio_bytes - b0.audio_bytes;
  const samples = [{ minute: 1, phase: 'fault-free', ...b1 }];
  const total = Math.max(2, MINUTES);
  for (let minute = 2; minute <= total && !exit; minute++) {
    const phase = PHASES[Math.floor((minute - 2) / 2) % PHASES.length];
    if (minute % 2 === 0) {
      proxy.script(phase.script);
      // Sockets keep the script they opened under: cut them so the new phase applies at once.
      proxy.cutAll();
    }
    await wait(MINUTE - 2000);
    if (exit) break;
    samples.push({ minute, phase: phase.name, ...(await sample(child.pid, metricsPort, proxy)) });
  }
  proxy.script({});
  const crashed = !!exit || /Fatal error|Check failed|Segmentation fault|core dumped/.test(agent.stderr());
  if (!exit) child.kill('SIGTERM');
  await new Promise((r) => (exit ? r() : child.on('exit', r)));
  await proxy.close();
  await svc.close();

  const middle = samples[Math.floor(samples.length / 2)];
  const end = samples.at(-1);
  const faultMinutes = samples.length - 1;
  const faultAudio = end.audio_bytes - b1.audio_bytes;
  const audioRatio = faultMinutes > 0 && baselineAudioPerMin > 0 ? faultAudio / faultMinutes / baselineAudioPerMin : undefined;
  const rssGrowth = (end.rss_mb - middle.rss_mb) / middle.rss_mb;
  const heapGrowth = (end.heap_mb - middle.heap_mb) / middle.heap_mb;
  const result = {
    minutes: samples.length,
    seed: SEED,
    crashes: crashed ? 1 : 0,
    exit,
    start: samples[0],
    middle,
    end,
    audio_per_minute_fault_free: baselineAudioPerMin,
    audio_per_minute_under_faults: faultMinutes ? Math.round(faultAudio / faultMinutes) : undefined,
    audio_ratio: audioRatio,
    reconnects: end.asr_sockets - 1,
    model_calls: end.model_calls,
    model_errors: end.model_errors,
    cu: end.cu,
    rss_growth_middle_to_end: rssGrowth,
    heap_growth_middle_to_end: heapGrowth,
    samples,
  };
  console.log(JSON.stringify(result, null, 2));
  const missed = [];
  if (crashed) missed.push(`crashed (${JSON.stringify(exit)}): ${agent.stderr().slice(-300)}`);
  if (rssGrowth > 0.1) missed.push(`RSS grew ${(rssGrowth * 100).toFixed(1)} % from middle to end`);
  if (heapGrowth > 0.1) missed.push(`heap grew ${(heapGrowth * 100).toFixed(1)} % from middle to end`);
  const summary = `soak ${samples.length} min: crashes ${crashed ? 1 : 0}; RSS ${samples[0].rss_mb}/${middle.rss_mb}/${end.rss_mb} MB, heap ${samples[0].heap_mb}/${middle.heap_mb}/${end.heap_mb} MB (start/middle/end); audio under faults ${audioRatio === undefined ? '?' : `${(audioRatio * 100).toFixed(1)} %`} of the fault-free minute; ${result.reconnects} ASR reconnects; ${end.model_calls} model calls (${end.model_errors} failed), ${end.cu} CU`;
  console.log(missed.length ? `${summary} — MISSED target: ${missed.join('; ')}` : `${summary} — within target`);
}

await main();
await finish(0);
