// Benchmark: latency the local service adds in front of a chat-completions upstream, against calling the upstream directly, and requests per second.
import { createServer } from 'node:http';
import { pino } from 'pino';
import { startService } from '../dist/src/service/index.js';
import { finish, quick, verdict } from './lib/bench.js';

const N = Number(process.env.BENCH_N ?? (quick ? 40 : 300));
/** Targets: the service adds under 5 ms at the median and keeps at least half the direct throughput. */
const TARGET_ADDED_MS = 5;
const TARGET_RPS_RATIO = 0.5;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);

const answer = JSON.stringify({
  id: 'x',
  object: 'chat.completion',
  created: 1,
  model: 'gen-4o',
  choices: [{ index: 0, message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
});
const upstream = createServer((req, res) => {
  req.resume();
  req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
});
await new Promise((r) => upstream.listen(0, '127.0.0.1', r));
const upstreamBase = `http://127.0.0.1:${upstream.address().port}/v1`;

const svc = await startService({
  dbPath: ':memory:',
  jwtSecret: 'b'.repeat(40),
  logger: pino({ level: 'silent' }),
  backends: { chat: { provider_a: { kind: 'upstream', baseUrl: upstreamBase, apiKey: 'sk-bench' } } },
});
const { apiKey } = svc.admin.createApiKey('bench');
svc.admin.setCredits('bench', { prepaid: 1e9 });
const body = JSON.stringify({ model: 'gen-4o', messages: [{ role: 'user', content: 'hello' }] });

const direct = () =>
  fetch(`${upstreamBase}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' }, body }).then(
    (r) => r.text(),
  );
const viaService = () =>
  fetch(`${svc.url}/api/core/provider_a/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body,
  }).then((r) => r.text());

async function sequential(fn) {
  for (let i = 0; i < 20; i++) await fn();
  const times = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return { p50_ms: times[Math.floor(N / 2)], p95_ms: times[Math.floor(N * 0.95)] };
}

async function throughput(fn) {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < N) await fn();
    }),
  );
  return N / ((performance.now() - t0) / 1000);
}

const base = await sequential(direct);
const svcLat = await sequential(viaService);
const baseRps = await throughput(direct);
const svcRps = await throughput(viaService);
await svc.close();
await new Promise((r) => upstream.close(r));

const result = {
  n: N,
  concurrency: CONCURRENCY,
  direct: { ...base, rps: baseRps },
  service: { ...svcLat, rps: svcRps },
  added_p50_ms: svcLat.p50_ms - base.p50_ms,
  rps_ratio: svcRps / baseRps,
};
console.log(JSON.stringify(result, null, 2));
verdict(
  `service-overhead: +${result.added_p50_ms.toFixed(2)} ms p50 over direct (${base.p50_ms.toFixed(2)} -> ${svcLat.p50_ms.toFixed(2)} ms), ${svcRps.toFixed(0)} req/s vs ${baseRps.toFixed(0)} direct (x${result.rps_ratio.toFixed(2)})`,
  [
    ...(result.added_p50_ms < TARGET_ADDED_MS ? [] : [`+${result.added_p50_ms.toFixed(2)} ms p50 (target under ${TARGET_ADDED_MS} ms)`]),
    ...(result.rps_ratio >= TARGET_RPS_RATIO ? [] : [`x${result.rps_ratio.toFixed(2)} of the direct throughput (target ${TARGET_RPS_RATIO})`]),
  ],
);
await finish(0);
