// Proves the end of an utterance on espeak-ng speech through the robot's voice gate and the local service's real recogniser: the final needs no audio beyond the hang-over plus one chunk, and a pause shorter than the hang-over does not split a sentence.
import { requireCommands } from '../helpers/requires.js';
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Subject } from 'rxjs';
import { AsrFramer } from '../../src/pipelines/asr-framing.js';
import { DEFAULT_HANGOVER_MS, loadVoiceDetector, voiceGate, type VoiceGateStats } from '../../src/pipelines/voice-gate.js';
import { startService } from '../../src/service/index.js';
import { connect } from '../fixtures/service/ws-client.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

requireCommands(['espeak-ng', 'sox', 'pocketsphinx_continuous']);

const RATE = 16000;
const BYTES_PER_MS = (RATE * 2) / 1000;
const FRAME = 20 * BYTES_PER_MS;
const CHUNK_MS = 100;

/** Speech of `parts` (espeak-ng, its own leading and trailing silence trimmed), joined by `pauseMs` of silence, with 1 s of silence before and `afterMs` after. */
function speech(parts: string[], pauseMs: number, afterMs = 3000): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'voice-endpoint-'));
  try {
    const pcm = parts.map((text, i) => {
      execFileSync('espeak-ng', ['-v', 'en-us', '-s', '160', '-w', join(dir, `${i}.wav`), text]);
      const raw = join(dir, `${i}.raw`);
      const trim = ['silence', '1', '0.01', '1%', 'reverse', 'silence', '1', '0.01', '1%', 'reverse'];
      execFileSync('sox', [join(dir, `${i}.wav`), '-r', String(RATE), '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', raw, ...trim]);
      return readFileSync(raw);
    });
    const gap = Buffer.alloc(Math.round(pauseMs * BYTES_PER_MS));
    const joined = pcm.flatMap((p, i) => (i ? [gap, p] : [p]));
    return Buffer.concat([Buffer.alloc(RATE * 2), ...joined, Buffer.alloc(Math.round(afterMs * BYTES_PER_MS))]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Feeds `pcm` in 20 ms pieces through the gate (WebRTC detector, default hang-over and commit) to a
 * recognition socket of the local service, on an audio clock (ms of audio fed), and stops feeding once
 * the gate has ended an utterance and `stopAfterEndMs` more audio went in. Returns what the gate saw.
 */
async function run(t: Test, pcm: Buffer, stopAfterEndMs: number) {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'a'.repeat(40), logger: pino({ level: 'silent' }) });
  t.teardown(() => svc.close());
  const { apiKey } = svc.admin.createApiKey('robot');
  const c = await connect(`${svc.wsUrl}/api/core/speechlab/asr?api_key=${apiKey}`);
  t.teardown(() => c.ws.close());
  const detector = await loadVoiceDetector(RATE, 2);
  let fedMs = 0;
  let lastSpeechMs = 0;
  let endMs: number | undefined;
  const stats: VoiceGateStats = { passedBytes: 0, gatedBytes: 0, onsets: 0 };
  const framer = new AsrFramer({ rate: RATE, languageCode: 'en' });
  const mic = new Subject<Buffer>();
  mic
    .pipe(
      voiceGate(
        {
          rate: RATE,
          detector: () => detector,
          chunkMs: CHUNK_MS,
          now: () => fedMs,
          onSpeech: (at) => (lastSpeechMs = at),
          onEnd: (at) => (endMs ??= at),
        },
        stats,
      ),
    )
    .subscribe((chunk) => c.send(framer.frame(chunk)));
  for (let i = 0; i < pcm.length; i += FRAME) {
    fedMs += 20;
    mic.next(pcm.subarray(i, i + FRAME));
    if (endMs !== undefined && fedMs >= endMs + stopAfterEndMs) break;
  }
  return { c, stats, fedMs, lastSpeechMs, endMs };
}

t.test('the final needs no audio after the hang-over plus one chunk', async (t) => {
  const pcm = speech(['what is your name'], 0);
  // Feeding stops one chunk after the gate's end of speech: the recogniser must commit on what it has.
  const r = await run(t, pcm, CHUNK_MS);
  t.ok(r.endMs !== undefined, 'the gate ended the utterance');
  t.ok(r.fedMs <= r.lastSpeechMs + DEFAULT_HANGOVER_MS + CHUNK_MS + 20, `audio fed: ${r.fedMs - r.lastSpeechMs} ms after the last speech frame`);
  const final = await r.c.next((m) => typeof m.asr_reply === 'string' && m.type === undefined);
  t.equal(final.asr_reply, 'what is your name');
  t.equal(r.stats.onsets, 1, 'one utterance');
});

t.test('a pause shorter than the hang-over does not split the sentence', async (t) => {
  const pauseMs = DEFAULT_HANGOVER_MS - 60;
  const pcm = speech(['hello robot', 'what is your name'], pauseMs);
  const r = await run(t, pcm, CHUNK_MS);
  const final = await r.c.next((m) => typeof m.asr_reply === 'string' && m.type === undefined);
  t.equal(final.asr_reply, 'hello robot what is your name', `one transcript across the ${pauseMs} ms pause`);
  t.equal(r.stats.onsets, 1, 'the gate heard one utterance');
  t.equal(r.c.messages.filter((m) => typeof m.asr_reply === 'string' && m.type === undefined).length, 1, 'one final');
});
