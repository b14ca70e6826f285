// Proves the speaker sinks: clips play in order for their duration, playing$ reports it, and stop() interrupts (barge-in).
import t from 'tap';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSpeaker, clipDurationMs, playerCommand, findOnPath } from '../../devices/speaker.js';
import { wavHeader } from '../../devices/wav.js';

const pcm = (ms: number, rate = 16000) => ({ data: Buffer.alloc((rate * 2 * ms) / 1000), format: 'pcm' as const, rate });

t.test('durations of WAV and PCM clips are exact', async (t) => {
  t.equal(clipDurationMs(pcm(250)), 250);
  t.equal(clipDurationMs({ data: Buffer.concat([wavHeader(44100, 22050), Buffer.alloc(44100)]), format: 'wav' }), 1000);
});

t.test('null sink: playing$ is true while a clip plays; stop interrupts it and drops the queue', async (t) => {
  const speaker = createSpeaker({ binding: 'null' });
  const states: boolean[] = [];
  speaker.playing$.subscribe((p) => states.push(p));
  const first = speaker.play(pcm(5000));
  const second = speaker.play(pcm(5000));
  await new Promise((r) => setImmediate(r));
  t.same(states, [false, true]);
  speaker.stop();
  t.same(await first, { completed: false, durationMs: 5000 });
  t.same(await second, { completed: false, durationMs: 5000 }, 'queued clip dropped');
  t.same(states, [false, true, false]);
  t.same(await speaker.play(pcm(20)), { completed: true, durationMs: 20 }, 'later clips play again');
});

t.test('an AbortSignal interrupts only its own clip', async (t) => {
  const speaker = createSpeaker({ binding: 'null' });
  const ac = new AbortController();
  const a = speaker.play(pcm(5000), ac.signal);
  const b = speaker.play(pcm(10));
  setImmediate(() => ac.abort());
  t.equal((await a).completed, false);
  t.equal((await b).completed, true);
});

t.test('file sink writes clips in order', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'spk-')), 'out');
  const speaker = createSpeaker({ binding: 'file', dir, realtime: false });
  await speaker.play({ data: Buffer.from('one'), format: 'mp3' });
  await speaker.play(pcm(1));
  t.same(readdirSync(dir).sort(), ['0001.mp3', '0002.raw']);
  t.equal(readFileSync(join(dir, '0001.mp3'), 'utf8'), 'one');
});

t.test('file sink: a new speaker numbers on after the clips there, and only the newest `keep` clips stay', async (t) => {
  const dir = join(mkdtempSync(join(tmpdir(), 'spk-')), 'out');
  const first = createSpeaker({ binding: 'file', dir, realtime: false, keep: 3 });
  await first.play({ data: Buffer.from('a'), format: 'mp3' });
  await first.play({ data: Buffer.from('b'), format: 'mp3' });
  const second = createSpeaker({ binding: 'file', dir, realtime: false, keep: 3 });
  await second.play({ data: Buffer.from('c'), format: 'mp3' });
  await second.play({ data: Buffer.from('d'), format: 'mp3' });
  t.same(readdirSync(dir).sort(), ['0002.mp3', '0003.mp3', '0004.mp3'], 'nothing overwritten; the oldest deleted');
  t.equal(readFileSync(join(dir, '0004.mp3'), 'utf8'), 'd');
});

t.test('player commands read stdin with the right format flags', async (t) => {
  t.same(playerCommand('aplay', pcm(1, 22050), 'plughw:1,0'), {
    cmd: 'aplay',
    args: ['-D', 'plughw:1,0', '-q', '-t', 'raw', '-f', 'S16_LE', '-c', '1', '-r', '22050', '-'],
  });
  t.same(playerCommand('paplay', { data: Buffer.alloc(0), format: 'wav' }).args, []);
  t.match(playerCommand('ffplay', { data: Buffer.alloc(0), format: 'mp3' }).args, ['-nodisp', '-autoexit']);
  t.throws(() => playerCommand('aplay', { data: Buffer.alloc(0), format: 'mp3' }), { name: 'DeviceError', code: 'speaker_format' });
  t.equal(findOnPath('definitely-not-a-player', '/usr/bin'), undefined);
  t.equal(findOnPath('sh', '/nonexistent:/bin'), '/bin/sh');
});

t.test('a streamed clip starts playing on its first bytes and the file sink gets all of it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'speaker-stream-'));
  const speaker = createSpeaker({ binding: 'file', dir, realtime: false });
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  const events: string[] = [];
  let asked: () => void = () => undefined;
  const restAsked = new Promise<void>((r) => (asked = r));
  async function* rest() {
    events.push('rest asked');
    asked();
    await gate;
    yield Buffer.alloc(3200, 1);
    yield Buffer.alloc(3200, 2);
  }
  const played = speaker.play({ data: Buffer.alloc(3200), format: 'pcm', rate: 16000, more: rest() }, undefined, { onStart: () => events.push('started') });
  await restAsked;
  t.same(events, ['started', 'rest asked'], 'playback started before the rest of the clip existed');
  release();
  t.same(await played, { completed: true, durationMs: 300 }, 'the duration counts every byte');
  const file = readdirSync(dir).find((f) => f.endsWith('.raw'))!;
  const bytes = readFileSync(join(dir, file));
  t.equal(bytes.length, 9600);
  t.equal(bytes[3200], 1);
  t.equal(bytes[6400], 2);
});
