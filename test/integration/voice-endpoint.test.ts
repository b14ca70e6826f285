// Proves the end of an utterance on espeak-ng speech through the robot's ASR stream (voice gate, pump, socket) and the local service's real recogniser: the final needs no audio beyond the hang-over plus one chunk, the local service is told the end (no silence padding) and hears the same words every turn, a hosted-style peer still commits on the padding, and a pause shorter than the hang-over does not split a sentence.
import { requireCommands } from '../helpers/requires.js';
import t, { type Test } from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Subject } from 'rxjs';
import { linkFromAsrSession } from '../../src/cloud/link.js';
import { openSpeechbAsr, openSpeechlabAsr } from '../../src/cloud/sockets.js';
import { DEFAULT_HANGOVER_MS, loadVoiceDetector } from '../../src/pipelines/voice-gate.js';
import { startService } from '../../src/service/index.js';
import { startAsrStream } from '../../actors/streams/asr-stream.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

requireCommands(['espeak-ng', 'sox', 'pocketsphinx_continuous']);

const RATE = 16000;
const BYTES_PER_MS = (RATE * 2) / 1000;
const FRAME = 20 * BYTES_PER_MS;
const CHUNK_MS = 100;

/** Speech of `parts` (espeak-ng, its own leading and trailing silence trimmed), joined by `pauseMs` of silence, with 1 s of silence before and `afterMs` after. */
function speech(parts: string[], pauseMs: number, afterMs = 1000): Buffer {
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
 * Feeds `pcm` (`turns` times over) in 20 ms pieces through the ASR stream the input runs (WebRTC gate
 * with the default hang-over, pump, session actor) to a recognition socket of the local service
 * (`speechlab`, which announces it takes an explicit end, or `speechb`, which does not: a hosted
 * peer's case), on an audio clock (ms of audio fed). In each turn feeding stops once the gate has
 * ended the utterance and `stopAfterEndMs` more audio went in; the next turn starts after its final.
 */
async function run(t: Test, pcm: Buffer, stopAfterEndMs: number, socket: 'speechlab' | 'speechb' = 'speechlab', turns = 1) {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'a'.repeat(40), logger: pino({ level: 'silent' }) });
  t.teardown(() => svc.close());
  const { apiKey } = svc.admin.createApiKey('robot');
  const detector = await loadVoiceDetector(RATE, 2);
  let fedMs = 0;
  let lastSpeechMs = 0;
  const finals: string[] = [];
  const waiters: Array<() => void> = [];
  const mic = new Subject<Buffer>();
  const stream = startAsrStream({
    connect: async (signal) =>
      linkFromAsrSession(
        socket === 'speechlab'
          ? await openSpeechlabAsr({ wsBaseUrl: svc.wsUrl, apiKey, rate: RATE, languageCode: 'en', signal })
          : await openSpeechbAsr({ asrWsUrl: svc.asrWsUrl, apiKey, rate: RATE, languageCode: 'en-US', signal }),
      ),
    audio$: mic,
    rate: RATE,
    now: () => fedMs,
    vad: {
      aggressiveness: 2,
      onsetMs: 60,
      preRollMs: 300,
      hangoverMs: DEFAULT_HANGOVER_MS,
      chunkMs: CHUNK_MS,
      detector: () => detector,
      onSpeech: (at) => (lastSpeechMs = at),
    },
    onEvent: (e) => {
      if (e.type === 'asr.final') finals.push(String(e.text));
      if (e.type === 'asr.connected') connected = true;
      for (const w of waiters.splice(0)) w();
    },
  });
  t.teardown(() => stream.stop());
  const until = (cond: () => boolean, what: string) =>
    new Promise<void>((resolve, reject) => {
      // A hang guard on a loaded machine, not a timing assertion.
      const guard = setTimeout(() => reject(new Error(`no ${what} within 60 s`)), 60_000);
      const check = () => (cond() ? (clearTimeout(guard), resolve()) : waiters.push(check));
      check();
    });
  // The speechlab socket's `connection` message says whether it takes an explicit end; the speechb one sends none.
  let connected = false;
  if (socket === 'speechlab') await until(() => connected, 'connection message');
  else await until(() => stream.actor.getSnapshot().hasTag('streaming'), 'socket');
  const fedAfterEnd: number[] = [];
  for (let turn = 0; turn < turns; turn++) {
    const endsBefore = stream.gate.ends ?? 0;
    let endMs: number | undefined;
    for (let i = 0; i < pcm.length; i += FRAME) {
      fedMs += 20;
      mic.next(pcm.subarray(i, i + FRAME));
      if (endMs === undefined && (stream.gate.ends ?? 0) > endsBefore) endMs = fedMs;
      if (endMs !== undefined && fedMs >= endMs + stopAfterEndMs) break;
    }
    t.ok(endMs !== undefined, `turn ${turn + 1}: the gate ended the utterance`);
    fedAfterEnd.push(fedMs - lastSpeechMs);
    await until(() => finals.length > turn, `final of turn ${turn + 1}`);
  }
  return { finals, fedAfterEnd, pump: stream.pump.stats(), gate: stream.gate };
}

t.test('the local service is told the end: the final needs no audio after the hang-over plus one chunk, and no padding', async (t) => {
  const pcm = speech(['what is your name'], 0);
  // Feeding stops one chunk after the gate's end of speech: the recogniser must commit on what it has.
  const r = await run(t, pcm, CHUNK_MS);
  t.ok(r.fedAfterEnd[0]! <= DEFAULT_HANGOVER_MS + CHUNK_MS + 20, `audio fed: ${r.fedAfterEnd[0]} ms after the last speech frame`);
  t.same(r.finals, ['what is your name']);
  t.equal(r.gate.onsets, 1, 'one utterance');
  t.equal(r.pump.endsSent, 1, 'the end was said to the service');
  t.equal(r.pump.commitBytes, 0, 'no silence padding went to the local service');
});

t.test('the same words every turn on one socket, with no padding', async (t) => {
  const pcm = speech(['what is your name'], 0);
  const r = await run(t, pcm, CHUNK_MS, 'speechlab', 3);
  t.same(r.finals, ['what is your name', 'what is your name', 'what is your name'], 'each turn heard the question, nothing more');
  t.equal(r.pump.commitBytes, 0);
});

t.test('a peer that takes no explicit end (the hosted sockets) commits on the padding', async (t) => {
  const pcm = speech(['what is your name'], 0);
  const r = await run(t, pcm, CHUNK_MS, 'speechb');
  t.same(r.finals, ['what is your name']);
  t.equal(r.pump.endsSent, 0, 'no end message to a peer that did not announce it');
  t.equal(r.pump.commitBytes, 600 * BYTES_PER_MS, 'commit_ms of zeros instead');
});

t.test('a pause shorter than the hang-over does not split the sentence', async (t) => {
  const pauseMs = DEFAULT_HANGOVER_MS - 60;
  const pcm = speech(['hello robot', 'what is your name'], pauseMs);
  const r = await run(t, pcm, CHUNK_MS);
  t.same(r.finals, ['hello robot what is your name'], `one transcript across the ${pauseMs} ms pause`);
  t.equal(r.gate.onsets, 1, 'the gate heard one utterance');
});
