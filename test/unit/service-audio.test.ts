// Proves the pure audio parts of the service: energy VAD utterance splitting, resampling, the JSGF grammar, audio format parsing.
import t from 'tap';
import { jsgfGrammar } from '../../src/service/backends/commands.js';
import { parseAudioFormat } from '../../src/service/backends/tts.js';
import { EnergyVad, resampleS16, rms } from '../../src/service/backends/vad.js';

function tone(ms: number, rate: number, amp: number): Buffer {
  const n = Math.round((rate * ms) / 1000);
  const b = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) b.writeInt16LE(Math.round(amp * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  return b;
}
const silence = (ms: number, rate: number) => Buffer.alloc(Math.round((rate * ms) / 1000) * 2);

t.test('rms', async (t) => {
  t.equal(rms(silence(20, 16000)), 0);
  t.ok(Math.abs(rms(tone(100, 16000, 1000)) - 707) < 5);
});

t.test('VAD: one utterance with pre-roll, ended by 500 ms of silence', async (t) => {
  const vad = new EnergyVad({ rate: 16000 });
  const events = vad.push(Buffer.concat([silence(500, 16000), tone(1000, 16000, 3000), silence(600, 16000)]));
  t.same(
    events.map((e) => e.type),
    ['start', 'end'],
  );
  const end = events[1] as { pcm: Buffer };
  const ms = end.pcm.length / 32;
  t.ok(ms >= 1000 + 200 && ms <= 1000 + 200 + 600, `utterance of ${ms} ms includes pre-roll and the closing silence`);
  t.equal(vad.speaking, false);
});

t.test('VAD: chunking does not change the result', async (t) => {
  const audio = Buffer.concat([silence(300, 8000), tone(700, 8000, 2000), silence(700, 8000), tone(400, 8000, 2000), silence(600, 8000)]);
  const whole = new EnergyVad({ rate: 8000 }).push(audio).filter((e) => e.type === 'end');
  const vad = new EnergyVad({ rate: 8000 });
  const pieces = [];
  for (let i = 0; i < audio.length; i += 333) pieces.push(...vad.push(audio.subarray(i, i + 333)));
  const ends = pieces.filter((e) => e.type === 'end');
  t.equal(ends.length, 2);
  t.same(ends, whole);
});

t.test('VAD: speech events grow while speaking; quiet noise never starts', async (t) => {
  const vad = new EnergyVad({ rate: 16000 });
  t.same(vad.push(tone(1000, 16000, 100)), [], 'below threshold');
  const ev = vad.push(tone(200, 16000, 3000));
  t.same(
    ev.map((e) => e.type),
    ['start', 'speech'],
  );
  const more = vad.push(tone(200, 16000, 3000));
  t.ok(more[0]?.type === 'speech' && more[0].speechMs > (ev[1] as { speechMs: number }).speechMs);
  t.ok(vad.flush(), 'flush returns the open utterance');
  t.equal(vad.flush(), undefined);
});

t.test('resample keeps duration and shape', async (t) => {
  const src = tone(1000, 8000, 5000);
  const up = resampleS16(src, 8000, 16000);
  t.equal(up.length, 32000);
  t.ok(Math.abs(rms(up) - rms(src)) < 50);
  t.equal(resampleS16(src, 16000, 16000), src);
  t.equal(resampleS16(tone(1000, 44100, 100), 44100, 16000).length, 32000);
});

t.test('JSGF grammar from phrases', async (t) => {
  const g = jsgfGrammar(['Hello Robot', 'turn left!', 'hello robot']);
  t.match(g, /^#JSGF V1\.0;\ngrammar commands;\npublic <command> = <phrase> \( \[and\] <phrase> \)\*;\n<phrase> = hello robot \| turn left;\n$/);
  t.throws(() => jsgfGrammar(['!!']));
});

t.test('audio formats', async (t) => {
  t.match(parseAudioFormat('mp3_44100_128'), { container: 'mp3', rate: 44100, bitrate: 128, contentType: 'audio/mpeg' });
  t.match(parseAudioFormat('pcm_16000'), { container: 'pcm', rate: 16000, contentType: 'audio/pcm' });
  t.match(parseAudioFormat('wav_22050'), { container: 'wav', contentType: 'audio/wav' });
  for (const bad of ['mp3_44100', 'mp3_11025_64', 'pcm_12345', 'ulaw_8000', 'opus_48000_64', '']) t.equal(parseAudioFormat(bad), undefined, bad);
});
