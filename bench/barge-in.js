// Barge-in: speech starting while the robot talks stops its playback; the robot's voice detector against today's transcript-driven path, in one run.
import { mkdtempSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Subject } from 'rxjs';
import { openSpeechlabAsr } from '../dist/src/cloud/sockets.js';
import { linkFromAsrSession } from '../dist/src/cloud/link.js';
import { chunkPcm } from '../dist/src/pipelines/pcm-chunker.js';
import { startAsrStream } from '../dist/actors/streams/asr-stream.js';
import { createSpeaker } from '../dist/devices/speaker.js';
import { makeRecording } from './lib/recording.js';
import { percentile, median } from './lib/agent.js';
import { finish, fork, quick } from './lib/bench.js';

const { values } = parseArgs({ options: { runs: { type: 'string', default: quick ? '2' : '20' }, quick: { type: 'boolean' } } });
const RUNS = Number(values.runs);
const RATE = 16000;
const FRAME_MS = 20;
const FRAME_BYTES = (RATE * 2 * FRAME_MS) / 1000;
const TARGET_P95_MS = 150;

const dir = mkdtempSync(join(tmpdir(), 'cortexd-barge-in-'));
// Someone says "stop" 0.8 s into the recording, while the robot is talking.
const rec = makeRecording(dir, 'stop', { text: 'stop', before: 0.8, after: 1.2 });
const onsetSample = rec.onsets[0];

const child = fork(new URL('./lib/service-process.js', import.meta.url), { stdio: 'inherit' });
const { wsUrl, apiKey } = await new Promise((r) => child.once('message', r));

/** One run: the robot plays a long clip; the recording is fed in real time; returns ms from speech onset to playback stopped. */
async function run(path) {
  const speaker = createSpeaker({ binding: 'null', realtime: true });
  const clip = { data: Buffer.alloc(RATE * 2 * 30), format: 'pcm', rate: RATE };
  let stoppedAt;
  const playing = speaker.play(clip).then((r) => ((stoppedAt = Date.now()), r));
  const mic = new Subject();
  const audio$ = path === 'vad' ? mic : mic.pipe(chunkPcm({ rate: RATE, periodMs: 100 }));
  let streaming;
  const ready = new Promise((r) => (streaming = r));
  const stream = startAsrStream({
    connect: async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: wsUrl, apiKey, rate: RATE, languageCode: 'en', signal })),
    audio$,
    rate: RATE,
    speaker: { playing$: speaker.playing$, stop: () => speaker.stop() },
    allowInterruption: true,
    ...(path === 'vad' ? { vad: { aggressiveness: 2, onsetMs: 60, preRollMs: 300, hangoverMs: 800, chunkMs: 100 } } : {}),
    onEvent: (e) => e.type === 'asr.state' && e.state === 'streaming' && streaming(),
  });
  await ready;
  // Real time: frame k is "captured" (its last sample) at start + (k + 1) * 20 ms and handed over then.
  const start = Date.now();
  let onsetAt;
  let k = 0;
  await new Promise((resolve) => {
    const tick = () => {
      while (start + (k + 1) * FRAME_MS <= Date.now() && k * FRAME_BYTES < rec.pcm.length) {
        const from = k * FRAME_BYTES;
        const frameEndSample = (from + FRAME_BYTES) / 2;
        if (onsetAt === undefined && frameEndSample > onsetSample) onsetAt = start + (onsetSample / RATE) * 1000;
        mic.next(Buffer.from(rec.pcm.subarray(from, from + FRAME_BYTES)));
        k++;
      }
      if (k * FRAME_BYTES >= rec.pcm.length || (stoppedAt !== undefined && Date.now() - stoppedAt > 200)) return resolve();
      setTimeout(tick, Math.max(0, start + (k + 1) * FRAME_MS - Date.now()));
    };
    tick();
  });
  // The transcript path may need the end of the utterance: wait for its final (or give up after 5 s).
  const deadline = Date.now() + 5000;
  while (stoppedAt === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  speaker.stop();
  await playing;
  stream.stop();
  mic.complete();
  return stoppedAt !== undefined && onsetAt !== undefined && stoppedAt - onsetAt < 4000 ? stoppedAt - onsetAt : undefined;
}

const results = { vad: [], transcript: [] };
const missed = { vad: 0, transcript: 0 };
try {
  for (let i = 0; i < RUNS; i++) {
    for (const path of i % 2 ? ['transcript', 'vad'] : ['vad', 'transcript']) {
      const ms = await run(path);
      if (ms === undefined) missed[path]++;
      else results[path].push(ms);
    }
  }
} finally {
  child.disconnect();
}
const stats = (xs) => ({ n: xs.length, p50_ms: median(xs), p95_ms: percentile(xs, 95), max_ms: xs.length ? Math.max(...xs) : undefined });
const out = {
  bench: 'barge-in',
  runs: RUNS,
  speech_onset_s: onsetSample / RATE,
  load_average: loadavg().map((x) => Math.round(x * 100) / 100),
  vad: { ...stats(results.vad), not_stopped: missed.vad, all_ms: results.vad },
  transcript: { ...stats(results.transcript), not_stopped: missed.transcript, all_ms: results.transcript },
};
console.log(JSON.stringify(out, null, 2));
const problems = [];
if (out.vad.p95_ms === undefined || out.vad.p95_ms > TARGET_P95_MS) problems.push(`voice-detector p95 ${out.vad.p95_ms} ms > ${TARGET_P95_MS} ms`);
if (missed.vad) problems.push(`${missed.vad} runs not stopped by the voice detector`);
console.log(
  `barge-in: speech onset -> playback stopped p95 ${out.vad.p95_ms} ms with the robot's voice detector vs ${out.transcript.p95_ms} ms transcript-driven ` +
    `(p50 ${out.vad.p50_ms} vs ${out.transcript.p50_ms}), ${RUNS} runs; ` +
    (problems.length ? `MISSED target: ${problems.join('; ')}` : 'within target'),
);
await finish(0);
