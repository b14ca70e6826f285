// HIL: on a machine where aplay finds no sound card, a sentence still being synthesised is saved whole and reaches the WebSim pages whole (the browser's only voice then).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSpeaker } from '../../devices/speaker.js';
import { withFileFallback } from '../../devices/speaker-fallback.js';
import { withBrowserSpeech } from '../../devices/speaker-browser.js';
import { parseWav } from '../../devices/wav.js';
import { BrowserAudioHub, type BrowserSpeech } from '../../src/cortex/browser-audio.js';
import { requireCommands } from '../helpers/requires.js';

requireCommands(['aplay']);

/** A sentence as the speech service streams it: a first piece, then the rest in pieces, some while the player already failed. */
function streamedClip(pieces: Buffer[]): { data: Buffer; format: 'pcm'; rate: number; more: AsyncIterable<Buffer> } {
  return {
    data: pieces[0]!,
    format: 'pcm',
    rate: 22050,
    more: (async function* () {
      for (const p of pieces.slice(1)) {
        // Synthesis takes time: each piece arrives on a later turn of the event loop.
        await new Promise((r) => setImmediate(r));
        yield p;
      }
    })(),
  };
}

const pieces = Array.from({ length: 12 }, (_, i) => Buffer.alloc(4410, i + 1));
const whole = Buffer.concat(pieces);

t.test('no sound card: a streamed sentence is saved whole and the page gets all of it, every time', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-fallback-stream-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const hub = new BrowserAudioHub();
  hub.listening = 1;
  const sent: BrowserSpeech[] = [];
  const sub = hub.speech$.subscribe((s) => sent.push(s));
  t.teardown(() => sub.unsubscribe());
  const said: string[] = [];
  // A device that does not exist: aplay answers as on a machine with no sound card.
  const speaker = withBrowserSpeech(
    withFileFallback(createSpeaker({ binding: 'player', player: 'aplay', device: 'no_such_card_here' }), { dir, onFallback: (line) => said.push(line) }),
    hub,
  );
  for (let n = 1; n <= 3; n++) {
    const result = await speaker.play(streamedClip(pieces));
    t.ok(result.completed, `sentence ${n} "played" into a file`);
  }
  t.equal(said.length, 1, 'the fallback is said once');
  t.match(said[0], /^no sound card: speech saved to /);
  const clips = sent.filter((s): s is Extract<BrowserSpeech, { type: 'clip' }> => s.type === 'clip');
  t.equal(clips.length, 3, 'the page got each of the three sentences');
  for (const c of clips) {
    const w = parseWav(c.clip.data);
    t.equal(w.data.length, whole.length, 'all of the sentence, not its first piece');
    t.ok(w.data.equals(whole), 'byte for byte, in order');
    t.equal(Math.round(c.clip.durationMs), Math.round((whole.length / 2 / 22050) * 1000), 'its true duration');
  }
  const files = readdirSync(dir).sort();
  t.same(files, ['0001.wav', '0002.wav', '0003.wav'], 'three WAV files');
  for (const f of files) {
    const w = parseWav(readFileSync(join(dir, f)));
    t.equal(w.rate, 22050);
    t.ok(w.data.equals(whole), `${f} holds the whole sentence`);
  }
});

const aplayWorks = spawnSync('aplay', ['-q', '-t', 'raw', '-f', 'S16_LE', '-r', '16000', '-d', '1', '/dev/zero']).status === 0;
t.comment(aplayWorks ? 'this machine has a sound card (the test names a device that does not exist)' : 'this machine has no sound card');
