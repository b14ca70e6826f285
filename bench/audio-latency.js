// Benchmark: latency the ASR audio path adds (chunk ready -> frame sent on a real socket) and sample loss over a long run, against a bare pass-through in the same run.
import { createServer } from 'node:http';
import { Observable, Subject, interval, map, share, takeUntil, timer } from 'rxjs';
import { WebSocketServer } from 'ws';
import { chunkPcm } from '../dist/src/pipelines/pcm-chunker.js';
import { openSpeechlabAsr } from '../dist/src/cloud/sockets.js';
import { startAsrStream } from '../dist/actors/streams/asr-stream.js';
import { linkFromAsrSession } from '../dist/src/cloud/link.js';
import { finish, option, quick, verdict } from './lib/bench.js';

const SECONDS = option('seconds', 60, 3);
/** Drop the pipeline's socket every this many seconds (0: never), to count loss across reconnects. */
const DROP_EVERY = option('drop-every', 0);
const RATE = 16000;
const MIC_MS = 20; // what a recorder delivers at a time

/** A loopback peer counting audio bytes per path (the `api_key` query names the path: pipeline or baseline). */
const http = createServer();
const wss = new WebSocketServer({ server: http });
const received = { pipeline: 0, baseline: 0 };
const sockets = { pipeline: undefined, baseline: undefined };
wss.on('connection', (ws, req) => {
  const path = new URL(req.url, 'http://x').searchParams.get('api_key') === 'baseline' ? 'baseline' : 'pipeline';
  sockets[path] = ws;
  ws.on('message', (data) => {
    received[path] += Buffer.from(JSON.parse(data.toString()).audio, 'base64').length;
  });
});
await new Promise((r) => http.listen(0, '127.0.0.1', r));
const wsBaseUrl = `ws://127.0.0.1:${http.address().port}`;

const percentile = (xs, p) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
/** The first chunks of each path run cold code (JIT); both paths skip the same number. */
const WARMUP = quick ? 5 : 20;
const stats = (all) => {
  const xs = all.slice(WARMUP);
  return statsOf(xs);
};
const statsOf = (xs) => ({ n: xs.length, p50_ms: percentile(xs, 50), p99_ms: percentile(xs, 99), max_ms: xs.length ? Math.max(...xs) : null });

// The microphone: 20 ms buffers of a deterministic signal, on a timer, shared by both paths.
const stop$ = timer(SECONDS * 1000);
let producedBytes = 0;
const mic$ = interval(MIC_MS).pipe(
  takeUntil(stop$),
  map((n) => {
    const buf = Buffer.alloc((RATE * 2 * MIC_MS) / 1000);
    for (let i = 0; i < buf.length; i += 2) buf.writeInt16LE(Math.round(8000 * Math.sin((n * buf.length + i) / 40)), i);
    producedBytes += buf.length;
    return buf;
  }),
  share(),
);

// Baseline socket first, so both paths subscribe to the microphone in the same tick.
const baselineSession = await openSpeechlabAsr({ wsBaseUrl, apiKey: 'baseline', rate: RATE });

// Project: chunker -> echo mute -> ring-buffered pump -> ASR session framing -> ws, under the session actor.
const pipelineLatency = [];
let ready;
let ringDelivered = 0;
const speaking = new Subject();
const pipeline = startAsrStream({
  rate: RATE,
  audio$: mic$.pipe(
    chunkPcm({ rate: RATE }),
    // Marks a chunk "ready" for the synchronous delivery that follows; a chunk that waits in the ring
    // (socket down) is counted apart, since its wait is the outage, not the pipeline.
    (src) =>
      new Observable((sub) =>
        src.subscribe({
          next: (chunk) => {
            ready = { chunk, t0: performance.now() };
            sub.next(chunk);
            ready = undefined;
          },
          error: (e) => sub.error(e),
          complete: () => sub.complete(),
        }),
      ),
  ),
  speaker: { playing$: speaking, stop: () => {} },
  timing: { backoffInitialMs: 50, backoffMaxMs: 200, quickFailureMs: 1 },
  connect: async (signal) => {
    const link = linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl, apiKey: 'pipeline', rate: RATE, signal }));
    const send = link.sendAudio;
    link.sendAudio = (pcm) => {
      const ok = send(pcm);
      if (ok && ready && ready.chunk === pcm) pipelineLatency.push(performance.now() - ready.t0);
      else if (ok) ringDelivered += 1;
      return ok;
    };
    return link;
  },
});
speaking.next(false);

// Baseline: the same chunks framed and sent straight on a socket (no mute, no ring, no actor).
const baselineLatency = [];
let baselineSent = 0;
const baselineDone = new Promise((resolve) =>
  mic$.pipe(chunkPcm({ rate: RATE })).subscribe({
    next: (chunk) => {
      const t0 = performance.now();
      if (baselineSession.sendAudio(chunk)) {
        baselineLatency.push(performance.now() - t0);
        baselineSent += chunk.length;
      }
    },
    complete: resolve,
  }),
);

const drops = DROP_EVERY > 0 ? setInterval(() => sockets.pipeline?.terminate(), DROP_EVERY * 1000) : undefined;
await baselineDone;
if (drops) clearInterval(drops);
// Everything produced must reach the peer: wait (bounded) for the last frames in flight.
const deadline = Date.now() + 5000;
while ((received.pipeline < producedBytes || received.baseline < producedBytes) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
const pumpStats = pipeline.pump.stats();
pipeline.stop();
baselineSession.close();
wss.close();
http.close();

const project = stats(pipelineLatency);
const baseline = stats(baselineLatency);
const result = {
  benchmark: 'audio-latency',
  seconds: SECONDS,
  rate: RATE,
  drop_every_s: DROP_EVERY,
  produced_bytes: producedBytes,
  project: {
    ...project,
    received_bytes: received.pipeline,
    lost_bytes: producedBytes - received.pipeline,
    ring_delivered_chunks: ringDelivered,
    ring_dropped_bytes: pumpStats.droppedBytes,
  },
  baseline: { ...baseline, received_bytes: received.baseline, lost_bytes: producedBytes - received.baseline },
  added_p50_ms: project.p50_ms - baseline.p50_ms,
  added_p99_ms: project.p99_ms - baseline.p99_ms,
  ratio_p99: baseline.p99_ms ? project.p99_ms / baseline.p99_ms : null,
};
console.log(JSON.stringify(result, null, 2));
const ok = result.project.p99_ms < 2 && result.project.lost_bytes === 0;
verdict(
  `audio-latency: chunk->frame p50 ${project.p50_ms.toFixed(3)} ms p99 ${project.p99_ms.toFixed(3)} ms (baseline p99 ${baseline.p99_ms.toFixed(3)} ms, added ${result.added_p99_ms.toFixed(3)} ms), lost ${result.project.lost_bytes} of ${producedBytes} bytes over ${SECONDS} s${DROP_EVERY ? `, socket dropped every ${DROP_EVERY} s` : ''}`,
  ok ? [] : [`p99 ${project.p99_ms.toFixed(3)} ms, ${result.project.lost_bytes} bytes lost (target p99 < 2 ms, zero loss)`],
);
await finish(0);
