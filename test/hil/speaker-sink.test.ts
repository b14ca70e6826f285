// HIL: the player binding runs the real aplay into ALSA's null sink, and a recording player proves bytes, format flags and barge-in.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSpeaker } from '../../devices/speaker.js';

const dir = mkdtempSync(join(tmpdir(), 'hil-spk-'));
const wav = join(dir, 'say.wav');
execFileSync('espeak-ng', ['-w', wav, 'hello']);

t.test('real aplay plays a WAV into the ALSA null device', async (t) => {
  const speaker = createSpeaker({ binding: 'player', player: 'aplay', device: 'null' });
  const states: boolean[] = [];
  speaker.playing$.subscribe((p) => states.push(p));
  const result = await speaker.play({ data: readFileSync(wav), format: 'wav' });
  t.equal(result.completed, true);
  t.ok(result.durationMs > 100);
  t.same(states, [false, true, false]);
});

t.test('a player that fails is a typed DeviceError with its message', async (t) => {
  const speaker = createSpeaker({ binding: 'player', player: 'aplay', device: 'no_such_device_xyz' });
  await t.rejects(speaker.play({ data: readFileSync(wav), format: 'wav' }), {
    name: 'DeviceError',
    message: /aplay found no audio device/,
    // What the player printed stays on the error for --verbose and the log, not in the message.
    detail: /no_such_device_xyz/,
  });
});

t.test('PCM reaches the player byte-exact with format flags; stop() interrupts it (barge-in)', async (t) => {
  const bin = join(dir, 'bin');
  mkdirSync(bin);
  const out = join(dir, 'played.raw');
  writeFileSync(join(bin, 'aplay'), `#!/bin/sh\necho "$@" > "${out}.args"\ncat > "${out}"\nexec sleep 30\n`);
  chmodSync(join(bin, 'aplay'), 0o755);
  const saved = process.env.PATH;
  process.env.PATH = `${bin}:${saved ?? ''}`;
  t.teardown(() => void (process.env.PATH = saved));
  const speaker = createSpeaker({ binding: 'player' });
  const pcm = Buffer.from(Array.from({ length: 32000 }, (_, i) => i % 256));
  const playing = speaker.play({ data: pcm, format: 'pcm', rate: 16000 });
  const start = Date.now();
  while (!(existsSync(out) && readFileSync(out).length === pcm.length)) {
    if (Date.now() - start > 10_000) throw new Error('player never got the audio');
    await new Promise((r) => setTimeout(r, 10));
  }
  speaker.stop();
  const result = await playing;
  t.equal(result.completed, false, 'interrupted');
  t.ok(readFileSync(out).equals(pcm), 'byte-exact');
  t.match(readFileSync(`${out}.args`, 'utf8'), /-q -t raw -f S16_LE -c 1 -r 16000 -/);
});
