// Failures a person can read: one line each in our words, the device's dump only with --verbose, a speaker without a sound card falls back to files once, and a repeated failure's summary ends when it stops.
import t from 'tap';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { TerminalView } from '../../cli/view.js';
import { lastLine, noAudioDevice, oneLine } from '../../src/device-output.js';
import { recorderFailure } from '../../devices/microphone.js';
import { createSpeaker, playerFailure } from '../../devices/speaker.js';
import { withFileFallback } from '../../devices/speaker-fallback.js';
import { wavHeader } from '../../devices/wav.js';

/** What aplay prints on a machine with no sound card (a container, CI). */
const ALSA_DUMP = [
  "ALSA lib confmisc.c:855:(parse_card) cannot find card '0'",
  'ALSA lib conf.c:5180:(_snd_config_evaluate) function snd_func_card_inum returned error: No such file or directory',
  'ALSA lib confmisc.c:422:(snd_func_concat) error evaluating strings',
  'ALSA lib pcm.c:2721:(snd_pcm_open_noupdate) Unknown PCM default',
  'aplay: main:850: audio open error: No such file or directory',
].join('\n');

function view(quietMs = 60_000) {
  const lines: string[] = [];
  const v = new TerminalView({ color: false, write: (text) => lines.push(...text.split('\n').filter(Boolean)), quietMs });
  return { v, lines, text: () => lines.map((l) => l.replace(/^\d\d:\d\d:\d\d /, '')) };
}

t.test('one line, whole words: a long message is cut at a space, control characters and newlines flattened', async (t) => {
  t.equal(oneLine('alpha beta\ngamma\tdelta', 100), 'alpha beta gamma delta');
  const cut = oneLine('word '.repeat(60), 40);
  t.ok(cut.endsWith('word...'), cut);
  t.ok(cut.length <= 43);
  t.equal(lastLine('first\nsecond line\n\n'), 'second line');
});

t.test('a player and a recorder without a device say so in our words; the dump is the detail', async (t) => {
  t.ok(noAudioDevice(ALSA_DUMP));
  const speaker = playerFailure('aplay', 1, ALSA_DUMP);
  t.equal(speaker.message, 'speaker: no sound card (aplay found no audio device)');
  t.equal(speaker.code, 'speaker_no_device');
  t.equal(speaker.detail, ALSA_DUMP);
  const other = playerFailure('aplay', 1, 'aplay: some other trouble\nsecond line of it');
  t.equal(other.message, 'speaker: aplay exited with code 1: second line of it');
  const lib = 'arecord has exited with error code 1.\n\nEnable debugging with the environment variable DEBUG=record.';
  const mic = recorderFailure('arecord', lib, 'arecord', ALSA_DUMP.replace(/aplay/g, 'arecord'));
  t.equal(mic.message, 'microphone: no microphone (arecord found no capture device)');
  t.notMatch(mic.message, /DEBUG=record/);
  t.equal(recorderFailure('arecord', lib, 'arecord', 'arecord: bad rate\n').message, 'microphone: arecord exited with code 1: arecord: bad rate');
});

t.test('a log failure of an action, hook or input is not printed beside its event; a device dump only as debug lines', async (t) => {
  const { v, text } = view();
  const sink = v.logDestination();
  sink.write(`${JSON.stringify({ level: 40, time: 1000, mode: 'm', action: 'speak', msg: 'speak failed: speaker: aplay exited' })}\n`);
  sink.write(`${JSON.stringify({ level: 40, time: 1000, mode: 'm', input: 'SpeechlabASRInput', err: { message: 'x' }, msg: 'microphone restart' })}\n`);
  t.same(text(), [], 'the events carry these failures');
  sink.write(`${JSON.stringify({ level: 20, time: 1000, device_output: 'ALSA lib a\nALSA lib b', msg: 'speaker output' })}\n`);
  t.same(text(), ['  | ALSA lib a', '  | ALSA lib b']);
  v.render({ type: 'hook', at: 1000, mode: 'm', hook_type: 'on_entry', handler_type: 'message', ok: false, error: `speak: ${'x'.repeat(10)}\n${ALSA_DUMP}` });
  t.equal(text().length, 3);
  t.notMatch(text()[2], /\\n/, 'no literal \\n');
});

t.test('a repeated failure: first line at once, then held back; its summary is printed when it stops coming, not at exit', async (t) => {
  const { v, text } = view(10_000);
  for (let i = 0; i < 5; i++)
    v.render({ type: 'error', at: 1000 + i * 1000, source: 'input.Mic', message: `microphone: no microphone; reopened in ${i * 100} ms` });
  t.same(text(), ['input.Mic: microphone: no microphone; reopened in 0 ms']);
  v.sweep(5000 + 9000);
  t.equal(text().length, 1, 'still within the quiet time: nothing yet');
  v.sweep(5000 + 10_000);
  t.equal(text().length, 2);
  t.match(text()[1], /^\(4 more like: .*no microphone.*, from \d\d:\d\d:\d\d to \d\d:\d\d:\d\d; no more since\)$/);
  v.render({ type: 'agent.stopping', at: 60_000, reason: 'test' });
  t.notOk(
    text().some((l) => /more like/.test(l) && l !== text()[1]),
    'nothing about it at stop',
  );
  v.render({ type: 'error', at: 70_000, source: 'input.Mic', message: 'microphone: no microphone; reopened in 100 ms' });
  t.match(text().at(-1), /^input\.Mic: microphone: no microphone/, 'the next episode is shown as new');
});

const aplayFails = spawnSync('aplay', ['-q', '-t', 'raw', '-f', 'S16_LE', '-r', '16000', '-d', '1', '/dev/zero'], { encoding: 'utf8' }).status !== 0;

t.test(
  'a speaker on a machine without a sound card falls back to WAV files, said once',
  { skip: aplayFails ? false : 'this machine has a sound card: aplay plays' },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cortexd-fallback-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const said: Array<[string, string | undefined]> = [];
    const speaker = withFileFallback(createSpeaker({ binding: 'player', player: 'aplay' }), { dir, onFallback: (line, detail) => said.push([line, detail]) });
    const pcm = Buffer.alloc(3200);
    const first = await speaker.play({ format: 'pcm', rate: 16000, data: pcm });
    t.ok(first.completed, 'the first clip "played" into a file');
    const second = await speaker.play({ format: 'wav', data: Buffer.concat([wavHeader(3200, 16000), pcm]) });
    t.ok(second.completed);
    t.equal(said.length, 1, 'announced once');
    t.equal(said[0]![0], `no sound card: speech saved to ${dir} instead`);
    t.match(said[0]![1], /ALSA|audio open error/, "aplay's own output is kept for --verbose");
    t.same(readdirSync(dir).sort(), ['0001.wav', '0002.wav'], 'both clips are WAV files');
    t.equal(speaker.binding, 'file');
  },
);
