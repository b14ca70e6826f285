// Benchmark: the VLM frame pipeline at 640x480 @30 fps (sustained fps, capture-to-send latency, CPU per frame) and memory under a consumer 10x slower, against frames generated and dropped.
import { createServer } from 'node:http';
import { WebSocketServer } from 'ws';
import { createCamera } from '../dist/devices/camera.js';
import { loadOpenCV } from '../dist/src/vision/opencv.js';
import { openVision } from '../dist/src/cloud/sockets.js';
import { startVlmStream } from '../dist/actors/streams/vlm-stream.js';
import { linkFromVisionSession } from '../dist/src/cloud/link.js';
import { finish, option, verdict } from './lib/bench.js';

const SECONDS = option('seconds', 20, 2);
const FPS = 30;
const camera = () => createCamera({ binding: 'synthetic', width: 640, height: 480, fps: FPS });
await loadOpenCV();

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : null;
};
const cpuMs = (u) => (u.user + u.system) / 1000;

/** Runs `start` for SECONDS and returns wall time, CPU time (all threads, incl. the encoder pool) and what `start` returns. */
async function measure(start) {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const handle = await start();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const out = await handle.stop();
  return { wallMs: performance.now() - t0, cpuMs: cpuMs(process.cpuUsage(cpu0)), ...out };
}

// Baseline: frames generated at 30 fps and dropped (the cost of the synthetic camera itself).
const baseline = await measure(() => {
  let frames = 0;
  const sub = camera()
    .frames()
    .subscribe(() => (frames += 1));
  return { stop: () => (sub.unsubscribe(), { frames }) };
});

// Project, fast consumer: a loopback vision peer that reads everything.
const http = createServer();
const wss = new WebSocketServer({ server: http, maxPayload: 16 * 1024 * 1024 });
let peerFrames = 0;
wss.on('connection', (ws) => ws.on('message', () => (peerFrames += 1)));
await new Promise((r) => http.listen(0, '127.0.0.1', r));
const vlmWsUrl = `ws://127.0.0.1:${http.address().port}/vlm`;

const fast = await measure(() => {
  const latency = [];
  const stream = startVlmStream({
    frames$: camera().frames(),
    fps: FPS,
    connect: async (signal) => {
      const link = linkFromVisionSession(await openVision({ vlmWsUrl, apiKey: 'bench', signal }));
      const send = link.sendFrame;
      link.sendFrame = (jpeg, ts) => {
        latency.push(Date.now() - ts * 1000);
        return send(jpeg, ts);
      };
      return link;
    },
  });
  const received0 = peerFrames;
  return {
    stop: () => {
      const s = stream.stats();
      stream.stop();
      return { frames: s.sent, peerFrames: peerFrames - received0, latency, stats: s };
    },
  };
});

// Project, consumer ten times slower: the link stays busy for 10 frame periods after each frame.
const mem = [];
const slow = await measure(() => {
  let busyUntil = 0;
  let sent = 0;
  const link = {
    sendFrame: () => ((busyUntil = performance.now() + (10 * 1000) / FPS), (sent += 1), true),
    bufferedAmount: () => (performance.now() < busyUntil ? 1 : 0),
    subscribe: () => () => {},
    close: () => {},
  };
  const stream = startVlmStream({ frames$: camera().frames(), fps: FPS, connect: async () => link });
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    mem.push({ rss: m.rss, heap: m.heapUsed, external: m.external });
  }, 250);
  return { stop: () => (clearInterval(sampler), stream.stop(), { frames: sent, stats: stream.stats() }) };
});
wss.close();
http.close();

const mb = (b) => Math.round((b / 1024 / 1024) * 10) / 10;
const third = Math.max(1, Math.floor(mem.length / 3));
const avg = (xs, k) => xs.reduce((s, x) => s + x[k], 0) / xs.length;
const memory = Object.fromEntries(
  ['rss', 'heap', 'external'].map((k) => [k, { first_third_mb: mb(avg(mem.slice(0, third), k)), last_third_mb: mb(avg(mem.slice(-third), k)) }]),
);
const perFrame = (run) => run.cpuMs / Math.max(1, run.frames);
const result = {
  benchmark: 'video-pipeline',
  seconds: SECONDS,
  size: '640x480',
  target_fps: FPS,
  baseline: { fps: baseline.frames / (baseline.wallMs / 1000), cpu_ms_per_frame: perFrame(baseline), cores: baseline.cpuMs / baseline.wallMs },
  project: {
    fps_sent: fast.frames / (fast.wallMs / 1000),
    fps_at_peer: fast.peerFrames / (fast.wallMs / 1000),
    capture_to_send_ms: { p50: percentile(fast.latency, 50), p99: percentile(fast.latency, 99) },
    cpu_ms_per_frame: perFrame(fast),
    added_cpu_ms_per_frame: perFrame(fast) - perFrame(baseline),
    cores: fast.cpuMs / fast.wallMs,
    dropped: { encoder: fast.stats.encodeDropped, replaced_at_socket: fast.stats.replaced },
  },
  slow_consumer: {
    fps_sent: slow.frames / (slow.wallMs / 1000),
    replaced_at_socket: slow.stats.replaced,
    memory,
    memory_growth_mb: mb(avg(mem.slice(-third), 'rss') - avg(mem.slice(0, third), 'rss')),
  },
};
console.log(JSON.stringify(result, null, 2));
const p = result.project;
const ok = p.fps_sent >= FPS * 0.95 && p.cores < 1 && Math.abs(result.slow_consumer.memory_growth_mb) < 20;
verdict(
  `video-pipeline: ${p.fps_sent.toFixed(1)} fps sent (camera alone ${result.baseline.fps.toFixed(1)}), capture->send p50 ${p.capture_to_send_ms.p50} ms p99 ${p.capture_to_send_ms.p99} ms, ${p.cpu_ms_per_frame.toFixed(2)} ms CPU/frame (+${p.added_cpu_ms_per_frame.toFixed(2)} over the camera), ${p.cores.toFixed(2)} cores; slow consumer ${result.slow_consumer.fps_sent.toFixed(1)} fps, rss ${memory.rss.first_third_mb} -> ${memory.rss.last_third_mb} MB`,
  ok
    ? []
    : [`${p.fps_sent.toFixed(1)} fps, ${p.cores.toFixed(2)} cores, memory ${result.slow_consumer.memory_growth_mb} MB (target 30 fps, < 1 core, flat memory)`],
);
await finish(0);
