// Voice detection on the robot: audio bytes sent to the recognition socket, with and without it, on a recording that is half silence; same transcripts from the local recogniser.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { openSpeechlabAsr } from '../dist/src/cloud/sockets.js';
import { linkFromAsrSession } from '../dist/src/cloud/link.js';
import { chunkPcm } from '../dist/src/pipelines/pcm-chunker.js';
import { startAsrStream } from '../dist/actors/streams/asr-stream.js';
import { makeRecording } from './lib/recording.js';
import { finish, fork, quick } from './lib/bench.js';

const RATE = 16000;
const FRAME_MS = 20;
const FRAME_BYTES = (RATE * 2 * FRAME_MS) / 1000;
const TARGET_DROP = 0.4;
/** Seconds of silence before the speech (`--quick`: one piece after a shorter silence). */
const BEFORE_S = quick ? 1.5 : 3.5;

const dir = mkdtempSync(join(tmpdir(), 'cortexd-vad-bytes-'));
// 3.5 s of silence, four commands 0.6 s apart, 3.5 s of silence: half of it is the silence put around and between the speech.
const PIECES = quick
  ? [['turn left and go forward', 1.5]]
  : [
      ['what is your name and what do you see', 0.6],
      ['turn left and go forward', 0.6],
      ['hello robot how are you', 0.6],
      ['thank you', 3.5],
    ];
const rec = makeRecording(dir, 'half-silence', { before: BEFORE_S, pieces: PIECES });
const insertedSilence = BEFORE_S + PIECES.reduce((s, p) => s + p[1], 0);
// Also measured on the recording itself: 10 ms windows under RMS 300 (this counts the pauses inside speech too).
let quiet = 0;
const win = 320;
for (let i = 0; i + win <= rec.pcm.length; i += win) {
  let sum = 0;
  for (let j = 0; j < win; j += 2) sum += rec.pcm.readInt16LE(i + j) ** 2;
  if (Math.sqrt(sum / (win / 2)) <= 300) quiet++;
}
const silenceShare = quiet / Math.floor(rec.pcm.length / win);

const child = fork(new URL('./lib/service-process.js', import.meta.url), { stdio: 'inherit' });
const { wsUrl, apiKey } = await new Promise((r) => child.once('message', r));

const mic = new Subject();
const streams = {};
const transcripts = { vad: [], all: [] };
try {
  for (const path of ['vad', 'all']) {
    let streaming;
    const ready = new Promise((r) => (streaming = r));
    streams[path] = startAsrStream({
      connect: async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: wsUrl, apiKey, rate: RATE, languageCode: 'en', signal })),
      audio$: path === 'vad' ? mic : mic.pipe(chunkPcm({ rate: RATE, periodMs: 100 })),
      rate: RATE,
      systemId: `asr-${path}`,
      ...(path === 'vad' ? { vad: { aggressiveness: 2, onsetMs: 60, preRollMs: 300, hangoverMs: 800, chunkMs: 100 } } : {}),
      onEvent: (e) => {
        if (e.type === 'asr.state' && e.state === 'streaming') streaming();
        if (e.type === 'asr.final') transcripts[path].push(String(e.text));
      },
    });
    await ready;
  }
  // The recording in real time (20 ms frames), then 2 s more of silence so the last utterance is decoded.
  const pcm = Buffer.concat([rec.pcm, Buffer.alloc(RATE * 2 * 2)]);
  const start = Date.now();
  for (let k = 0; k * FRAME_BYTES < pcm.length; k++) {
    const due = start + (k + 1) * FRAME_MS;
    if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
    mic.next(Buffer.from(pcm.subarray(k * FRAME_BYTES, (k + 1) * FRAME_BYTES)));
  }
  const deadline = Date.now() + 8000;
  while ((transcripts.vad.length < PIECES.length || transcripts.all.length < PIECES.length) && Date.now() < deadline)
    await new Promise((r) => setTimeout(r, 50));
} finally {
  for (const s of Object.values(streams)) s.stop();
  child.disconnect();
}
const bytes = (s) => {
  const p = s.pump.stats();
  return { audio: p.sentBytes, keepalive_silence: p.silenceBytes, total: p.sentBytes + p.silenceBytes };
};
const vad = bytes(streams.vad);
const all = bytes(streams.all);
const drop = 1 - vad.total / all.total;
const same = JSON.stringify(transcripts.vad) === JSON.stringify(transcripts.all);
const out = {
  bench: 'vad-bytes',
  recording_s: rec.pcm.length / (RATE * 2),
  silence_share: Math.round((insertedSilence / (rec.pcm.length / (RATE * 2))) * 1000) / 1000,
  quiet_windows_share: Math.round(silenceShare * 1000) / 1000,
  sent_bytes: { with_vad: vad, without_vad: all },
  gate: streams.vad.gate,
  drop: Math.round(drop * 1000) / 1000,
  transcripts,
  same_transcripts: same,
};
console.log(JSON.stringify(out, null, 2));
const missed = [];
if (drop < TARGET_DROP) missed.push(`bytes dropped ${(drop * 100).toFixed(1)} % < ${TARGET_DROP * 100} %`);
if (!same || transcripts.all.length === 0) missed.push('transcripts differ');
console.log(
  `vad-bytes: ${vad.total} bytes sent with voice detection vs ${all.total} without (${(drop * 100).toFixed(1)} % less) on a recording ${((insertedSilence / (rec.pcm.length / (RATE * 2))) * 100).toFixed(0)} % silence; ` +
    `transcripts ${same ? 'the same' : 'differ'} (${transcripts.vad.join(' | ')}); ` +
    (missed.length ? `MISSED target: ${missed.join('; ')}` : 'within target'),
);
await finish(0);
