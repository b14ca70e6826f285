// Benchmark: ASR audio and VLM frames that reach the real local service through a peer cutting every socket 1.5 s after it opens, against a fault-free run at the same time, and how fast a dropped healthy connection is back.
import { cpus, loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { startFaultProxy } from '../dist/test/support/fault-proxy.js';
import { openSpeechlabAsr, openVision } from '../dist/src/cloud/sockets.js';
import { chunkPcm } from '../dist/src/pipelines/pcm-chunker.js';
import { createMicrophone } from '../dist/devices/microphone.js';
import { createCamera } from '../dist/devices/camera.js';
import { loadOpenCV } from '../dist/src/vision/opencv.js';
import { startAsrStream } from '../dist/actors/streams/asr-stream.js';
import { startVlmStream } from '../dist/actors/streams/vlm-stream.js';
import { linkFromAsrSession, linkFromVisionSession } from '../dist/src/cloud/link.js';
import { finish, fork, option } from './lib/bench.js';

const SECONDS = option('seconds', 120, 3);
const CUT_MS = option('cut-ms', 1500);
const FPS = 5;
const TARGETS = { audio_ratio: 0.95, frames_ratio: 0.8, reconnect_p99_ms: 250 };
await loadOpenCV();

const percentile = (xs, p) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

// The service runs in its own process, as the hosted one runs on another machine: its recognition and
// vision work does not stall the robot's event loop that is measured here.
const child = fork(new URL('./lib/service-process.js', import.meta.url), { stdio: 'inherit' });
const service = await new Promise((resolve, reject) => {
  child.once('message', resolve);
  child.once('exit', (code) => reject(new Error(`the service process exited with ${code}`)));
});
const { apiKey } = service;

/** One robot: a replayed microphone and a synthetic camera on ASR and VLM streams through `proxy`. */
function robot(proxy) {
  const states = { asr: [], vlm: [] };
  /** Client-side times (ms since epoch, the proxy's clock too) of closes seen and connects started/opened. */
  const marks = { asr: [], vlm: [] };
  const mark = (kind, what) => marks[kind].push({ what, at: Date.now() });
  const timed = (kind, open) => async (signal) => {
    mark(kind, 'start');
    const link = await open(signal);
    mark(kind, 'open');
    return link;
  };
  const mic = createMicrophone({
    binding: 'replay',
    file: new URL('../config/media/turn_left.wav', import.meta.url).pathname,
    rate: 16000,
    loop: true,
    realtime: true,
    period_ms: 20,
  });
  const asr = startAsrStream({
    rate: 16000,
    audio$: mic.pcm().pipe(chunkPcm({ rate: 16000 })),
    onEvent: (e) => (e.type === 'asr.state' ? states.asr.push(e) : e.type === 'asr.closed' && mark('asr', 'closed')),
    connect: timed('asr', async (signal) =>
      linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: proxy.wsUrl, apiKey, rate: 16000, languageCode: 'en', signal })),
    ),
  });
  const vlm = startVlmStream({
    frames$: createCamera({ binding: 'synthetic', width: 640, height: 480, fps: FPS }).frames(),
    fps: FPS,
    onEvent: (e) => (e.type === 'vlm.state' ? states.vlm.push(e) : e.type === 'vlm.closed' && mark('vlm', 'closed')),
    connect: timed('vlm', async (signal) => linkFromVisionSession(await openVision({ vlmWsUrl: `${proxy.wsUrl}/vlm`, apiKey, signal }))),
  });
  return {
    states,
    marks,
    stop() {
      asr.stop();
      vlm.stop();
      return { pump: asr.pump.stats(), frames: vlm.stats() };
    },
  };
}

const clean = await startFaultProxy({ target: service.url, script: {} });
const faulty = await startFaultProxy({ target: service.url, script: { cutAfterMs: CUT_MS } });
const robots = { baseline: robot(clean), faulty: robot(faulty) };
// How often this process (robots and proxies) could not run: reconnect outliers that coincide with
// stalls here, or with a loaded machine, are the machine's, not the policy's.
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const loadBefore = loadavg()[0];
const t0 = performance.now();
await new Promise((r) => setTimeout(r, SECONDS * 1000));
const wallS = (performance.now() - t0) / 1000;
loopDelay.disable();
const ends = { baseline: robots.baseline.stop(), faulty: robots.faulty.stop() };
const allClosed = (p) => () => {
  const s = p.stats().sockets;
  return s.speechlab.closed === s.speechlab.opened && s.vlm.closed === s.vlm.opened;
};
await Promise.all([clean.until(allClosed(clean), 'baseline sockets closed'), faulty.until(allClosed(faulty), 'faulty sockets closed')]);

/**
 * From each cut to the next socket of the same kind open at the proxy, and its parts: the cut seen
 * by the client (`detect`), the policy's wait before the next connect (`policy`), the client's
 * upgrade request reaching the proxy (`to_proxy`), the service accepting the proxy's own upgrade
 * (`service_upgrade`).
 */
function reconnectGaps(records, marks) {
  const gaps = [];
  const parts = { detect: [], policy: [], to_proxy: [], service_upgrade: [] };
  for (const [kind, client] of [
    ['speechlab', marks.asr],
    ['vlm', marks.vlm],
  ]) {
    const mine = records.filter((r) => r.kind === kind);
    for (let i = 0; i + 1 < mine.length; i++) {
      if (!mine[i].cut) continue;
      const cut = mine[i].closedAt;
      gaps.push(mine[i + 1].openedAt - cut);
      const after = (what, from) => client.find((m) => m.what === what && m.at >= from)?.at;
      const closed = after('closed', cut);
      const start = closed !== undefined ? after('start', closed) : undefined;
      if (closed === undefined || start === undefined) continue;
      parts.detect.push(closed - cut);
      parts.policy.push(start - closed);
      parts.to_proxy.push(mine[i + 1].requestedAt - start);
      parts.service_upgrade.push(mine[i + 1].openedAt - mine[i + 1].requestedAt);
    }
  }
  return { gaps, parts };
}

const side = (name, proxy) => {
  const s = proxy.stats();
  const st = robots[name].states;
  const count = (list, state) => list.filter((e) => e.state === state).length;
  return {
    audio_bytes_at_service: s.audioBytes,
    audio_seconds_at_service: Math.round((s.audioBytes / 32000) * 10) / 10,
    audio_bytes_sent: ends[name].pump.sentBytes,
    audio_bytes_dropped_by_ring: ends[name].pump.droppedBytes,
    frames_at_service: s.frames,
    frames_sent: ends[name].frames.sent,
    frames_dropped:
      ends[name].frames.replaced + ends[name].frames.droppedDisconnected + ends[name].frames.encodeDropped + ends[name].frames.skippedDisconnected,
    sockets: s.sockets,
    state_events: Object.fromEntries(
      ['asr', 'vlm'].map((k) => [
        k,
        {
          connecting: count(st[k], 'connecting'),
          streaming: count(st[k], 'streaming'),
          backingOff: count(st[k], 'backingOff'),
          failed: count(st[k], 'failed'),
        },
      ]),
    ),
  };
};
const baseline = side('baseline', clean);
const withFaults = side('faulty', faulty);
const { gaps, parts } = reconnectGaps(faulty.sockets(), robots.faulty.marks);
await clean.close();
await faulty.close();
child.disconnect();

const ratio = (a, b) => (b > 0 ? Math.round((a / b) * 10000) / 10000 : null);
const result = {
  benchmark: 'stream-faults',
  seconds: Math.round(wallS * 10) / 10,
  cut_after_ms: CUT_MS,
  vlm_fps: FPS,
  service: 'local service in a child process, behind two fault proxies in this process (one scripted, one clean)',
  baseline,
  faulty: withFaults,
  audio_ratio: ratio(withFaults.audio_bytes_at_service, baseline.audio_bytes_at_service),
  frames_ratio: ratio(withFaults.frames_at_service, baseline.frames_at_service),
  reconnect_ms: { n: gaps.length, p50: percentile(gaps, 50), p99: percentile(gaps, 99), max: gaps.length ? Math.max(...gaps) : null },
  reconnect_parts_ms: Object.fromEntries(
    Object.entries(parts).map(([k, xs]) => [k, { p50: percentile(xs, 50), p99: percentile(xs, 99), max: xs.length ? Math.max(...xs) : null }]),
  ),
  event_loop_delay_ms: { p99: Math.round(loopDelay.percentile(99) / 1e5) / 10, max: Math.round(loopDelay.max / 1e5) / 10 },
  load_average_1min: { before: loadBefore, after: loadavg()[0], cores: cpus().length },
  targets: TARGETS,
};
console.log(JSON.stringify(result, null, 2));
const missed = [];
if (!(result.audio_ratio >= TARGETS.audio_ratio)) missed.push(`audio ${result.audio_ratio} < ${TARGETS.audio_ratio}`);
if (!(result.frames_ratio >= TARGETS.frames_ratio)) missed.push(`frames ${result.frames_ratio} < ${TARGETS.frames_ratio}`);
if (!(gaps.length > 0 && result.reconnect_ms.p99 <= TARGETS.reconnect_p99_ms))
  missed.push(`reconnect p99 ${result.reconnect_ms.p99} ms > ${TARGETS.reconnect_p99_ms} ms`);
const pct = (r) => (r === null ? 'n/a' : `${(r * 100).toFixed(1)} %`);
console.log(
  `stream-faults: ${SECONDS} s, sockets cut every ${CUT_MS} ms (${withFaults.sockets.speechlab.cut} ASR + ${withFaults.sockets.vlm.cut} VLM cuts): audio ${pct(result.audio_ratio)} and frames ${pct(result.frames_ratio)} of the fault-free run, reconnect p50 ${result.reconnect_ms.p50} ms p99 ${result.reconnect_ms.p99} ms: ${missed.length ? `MISSED target: ${missed.join('; ')}` : 'within target'}`,
);
await finish(0);
