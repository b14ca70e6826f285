// Proves the simulated microphone replays audio exactly and in real time, and microphone config is validated (the recorder is reopened by its session actor: test/hil/microphone-session.test.ts).
import t from 'tap';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TestScheduler } from 'rxjs/testing';
import { lastValueFrom, toArray, take } from 'rxjs';
import { replayPcm, createReplayMicrophone, loadPcm } from '../../devices/microphone-replay.js';
import { createMicrophone } from '../../devices/microphone.js';
import { parseWav, wavHeader } from '../../devices/wav.js';

const pcm = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

t.test('real-time replay follows the clock: 100 ms of 16 kHz audio is 3200 bytes', async (t) => {
  const ts = new TestScheduler(() => {});
  const got: Array<{ at: number; n: number }> = [];
  ts.run(({ flush }) => {
    const audio = Buffer.alloc(32000);
    replayPcm(audio, { rate: 16000, loop: false, realtime: true, periodMs: 20, scheduler: ts }).subscribe((b) => got.push({ at: ts.now(), n: b.length }));
    flush();
  });
  t.same(got.slice(0, 3), [
    { at: 20, n: 640 },
    { at: 40, n: 640 },
    { at: 60, n: 640 },
  ]);
  t.equal(
    got.reduce((s, g) => s + g.n, 0),
    32000,
    'every byte, once',
  );
  t.equal(got.at(-1)!.at, 1000, 'one second of audio took one second');
});

t.test('looped replay wraps around without losing or repeating a byte', async (t) => {
  const out = await lastValueFrom(replayPcm(pcm, { rate: 8000, loop: true, realtime: false, periodMs: 30 }).pipe(take(20), toArray()));
  const all = Buffer.concat(out);
  for (let i = 0; i < all.length; i++) if (all[i] !== pcm[i % pcm.length]) return t.fail(`byte ${i} differs`);
  t.ok(all.length > pcm.length * 2, 'went round more than twice');
});

t.test('replay of a WAV file strips the header; a wrong rate is refused', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'mic-'));
  const wav = join(dir, 'a.wav');
  writeFileSync(wav, Buffer.concat([wavHeader(pcm.length, 16000), pcm]));
  const loaded = await loadPcm(wav, 8000);
  t.equal(loaded.rate, 16000);
  t.same(loaded.pcm, pcm);
  const mic = createMicrophone({ binding: 'replay', file: wav, loop: false, realtime: false });
  t.same(Buffer.concat(await lastValueFrom(mic.pcm().pipe(toArray()))), pcm);
  const wrong = createReplayMicrophone({ binding: 'replay', file: wav, rate: 8000, loop: false, realtime: false, period_ms: 20 });
  await t.rejects(lastValueFrom(wrong.pcm()), { name: 'DeviceError', message: /16000 Hz but .* 8000 Hz/ });
  await t.rejects(lastValueFrom(createMicrophone({ binding: 'replay', file: join(dir, 'none.wav') }).pcm()), {
    name: 'DeviceError',
    code: 'microphone_failed',
  });
});

t.test('WAV parser skips extra chunks and accepts streamed (size 0) data chunks', async (t) => {
  const header = wavHeader(0, 22050);
  const list = Buffer.concat([Buffer.from('LIST'), Buffer.from([4, 0, 0, 0]), Buffer.from('abcd')]);
  const file = Buffer.concat([header.subarray(0, 36), list, header.subarray(36), pcm]);
  const info = parseWav(file);
  t.equal(info.rate, 22050);
  t.same(info.data, pcm);
  t.throws(() => parseWav(Buffer.from('nope')), { name: 'DeviceError' });
});

t.test('config is validated before anything starts', async (t) => {
  t.throws(() => createMicrophone({ binding: 'recorder', rate: 12345 as 16000 }));
  t.throws(() => createMicrophone({ binding: 'replay' } as never));
  const mic = createMicrophone({ binding: 'recorder' });
  t.equal(mic.rate, 16000);
  t.equal(mic.binding, 'recorder');
});
