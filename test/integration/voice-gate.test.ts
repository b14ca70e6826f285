// Voice detection on the robot with the WebRTC detector on espeak-ng speech: silence held back, speech sent with its pre-roll and hang-over, onsets stop the robot's speech.
import { requireCommands } from '../helpers/requires.js';
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BehaviorSubject, Subject, from, lastValueFrom, toArray } from 'rxjs';
import { DEFAULT_HANGOVER_MS, isEndOfUtterance, loadVoiceDetector, voiceGate, type VoiceGateStats } from '../../src/pipelines/voice-gate.js';
import { asrSession } from '../../actors/streams/asr-stream.js';

requireCommands(['espeak-ng', 'sox']);

const RATE = 16000;

/** "turn left" with 2 s of silence before and after, 16 kHz s16le, without its header. */
function recording(): { pcm: Buffer; speechStart: number; speechEnd: number } {
  const dir = mkdtempSync(join(tmpdir(), 'voice-gate-'));
  execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', join(dir, 'raw.wav'), 'turn left']);
  execFileSync('sox', [
    join(dir, 'raw.wav'),
    '-r',
    '16000',
    '-c',
    '1',
    '-b',
    '16',
    '-e',
    'signed-integer',
    '-t',
    'raw',
    join(dir, 'speech.raw'),
    'pad',
    '2',
    '2',
  ]);
  const pcm = readFileSync(join(dir, 'speech.raw'));
  let first = -1;
  let last = -1;
  for (let i = 0; i < pcm.length; i += 2) if (Math.abs(pcm.readInt16LE(i)) > 1000) first < 0 && (first = i), (last = i);
  return { pcm, speechStart: first, speechEnd: last };
}

const pieces = (buf: Buffer, size: number) => Array.from({ length: Math.ceil(buf.length / size) }, (_, i) => buf.subarray(i * size, (i + 1) * size));
const gateAll = async (chunks: Buffer[], stats: VoiceGateStats, onOnset?: (at: number) => void) => {
  const detector = await loadVoiceDetector(RATE, 2);
  const out = await lastValueFrom(from(chunks).pipe(voiceGate({ rate: RATE, detector: () => detector, ...(onOnset ? { onOnset } : {}) }, stats), toArray()));
  return out;
};

t.test('silence is held back; the speech goes out whole, with 300 ms before it and the hang-over after, then the end of the utterance', async (t) => {
  const rec = recording();
  const stats: VoiceGateStats = { passedBytes: 0, gatedBytes: 0, onsets: 0 };
  const onsets: number[] = [];
  const chunks = await gateAll(pieces(rec.pcm, 640), stats, (at) => onsets.push(at));
  t.equal(stats.ends, 1, 'one utterance ended');
  t.ok(isEndOfUtterance(chunks.at(-1)!), 'the end of the utterance is the last thing out, behind its audio');
  t.equal(chunks.filter(isEndOfUtterance).length, 1, 'said once');
  const sent = Buffer.concat(chunks);
  t.equal(stats.onsets, 1, 'one utterance');
  t.equal(onsets.length, 1);
  const at = rec.pcm.indexOf(sent.subarray(0, 640));
  t.ok(at >= 0, 'what is sent is a piece of the recording, as it was');
  t.same(sent, rec.pcm.subarray(at, at + sent.length), 'one contiguous piece');
  t.ok(at <= rec.speechStart - 0.2 * RATE * 2, `it starts at least 200 ms before the speech (${(rec.speechStart - at) / 32} ms)`);
  t.ok(
    at + sent.length >= rec.speechEnd + (DEFAULT_HANGOVER_MS - 60) * 32,
    `and ends about the hang-over after it (${(at + sent.length - rec.speechEnd) / 32} ms)`,
  );
  t.ok(sent.length < rec.pcm.length * 0.65, `silence held back: ${sent.length} of ${rec.pcm.length} bytes sent`);
  t.equal(stats.passedBytes + stats.gatedBytes <= rec.pcm.length, true);
  t.ok(sent.length % 2 === 0);
});

t.test('the same bytes in any chunking pass the same bytes', async (t) => {
  const rec = recording();
  const reference = Buffer.concat(await gateAll(pieces(rec.pcm, 3200), { passedBytes: 0, gatedBytes: 0, onsets: 0 }));
  for (const size of [2, 318, 641, 4410]) {
    t.same(Buffer.concat(await gateAll(pieces(rec.pcm, size), { passedBytes: 0, gatedBytes: 0, onsets: 0 })), reference, `pieces of ${size} bytes`);
  }
});

t.test('a speech onset while the robot talks stops its speech when interruption is allowed, and only then', async (t) => {
  const rec = recording();
  for (const allow of [true, false]) {
    const mic = new Subject<Buffer>();
    const playing = new BehaviorSubject(true);
    let stops = 0;
    const onsets: boolean[] = [];
    const session = asrSession({
      connect: async () => Promise.reject(new Error('no socket in this test')),
      audio$: mic,
      rate: RATE,
      speaker: { playing$: playing, stop: () => void stops++ },
      allowInterruption: allow,
      vad: { aggressiveness: 2, onsetMs: 60, preRollMs: 300, hangoverMs: 800, chunkMs: 100, onOnset: (_at, interrupted) => onsets.push(interrupted) },
    });
    session.start();
    // The detector loads asynchronously: wait for it before the recording plays.
    await loadVoiceDetector(RATE, 2);
    await new Promise((r) => setImmediate(r));
    for (const p of pieces(rec.pcm, 640)) mic.next(p);
    session.stop();
    if (allow) {
      t.equal(stops, 1, 'the speaker was stopped at the onset');
      t.same(onsets, [true]);
    } else {
      t.equal(stops, 0, 'without interruption the microphone is muted while the robot talks: no onset at all');
      t.same(onsets, []);
    }
  }
});
