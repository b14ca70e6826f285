// On a machine with no sound card, under a real terminal: the start says speech goes to WAV files (never "the speaker" then "no sound card"), each failure is one line in our words (no literal \n, no ALSA dump, no recorder advice), and --verbose shows the device's own output.
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBuild } from '../helpers/requires.js';
import { hasScript, runInPty, visible } from '../helpers/pty.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

requireBuild();
const aplayFails = spawnSync('aplay', ['-q', '-t', 'raw', '-f', 'S16_LE', '-r', '16000', '-d', '1', '/dev/zero'], { encoding: 'utf8' }).status !== 0;
const skip = !hasScript ? 'util-linux script is not installed' : !aplayFails ? 'this machine has a sound card: aplay plays' : false;

/** Runs the shipped conversation agent (microphone and speaker, embedded service) for 6 s in a pty; returns the screen and the speech directory's files. */
async function conversation(t: Test, extra: string[] = []): Promise<{ screen: string; files: string[] }> {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-nosound-'));
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  const run = runInPty(['run', 'conversation', '--for', '6s', '--fresh', ...extra], { CORTEX_STATE_DIR: state, CORTEX_WEBSIM_PORT: '0', NO_COLOR: '1' });
  t.teardown(() => void run.child.kill('SIGKILL'));
  let guard: NodeJS.Timeout | undefined;
  const code = await Promise.race([
    run.exited,
    new Promise<number>((_, reject) => (guard = setTimeout(() => reject(new Error(`no exit: ${run.screen()}`)), 60_000))),
  ]);
  clearTimeout(guard);
  t.equal(code, 0, 'the run ends cleanly');
  let files: string[] = [];
  try {
    files = readdirSync(join(state, 'speech'));
  } catch {
    files = [];
  }
  return { screen: visible(run.screen()), files };
}

t.test('no sound card, plain and --verbose (both runs at once)', { skip }, async (t) => {
  const [plain, verbose] = await Promise.all([conversation(t), conversation(t, ['--verbose'])]);

  t.test('plain: one readable line per failure, the fallback said once, speech in WAV files', async (t) => {
    const { screen, files } = plain;
    const lines = screen.split('\n').filter((l) => l.trim());
    // One true thing about sound, at the start: speech goes to files, because there is no sound card.
    t.equal(lines.filter((l) => /no sound card/.test(l)).length, 1, 'no sound card is said once');
    t.match(screen, /speech goes to WAV files in .*speech \(no sound card here; a WebSim page plays it too\)/, 'and said at the start');
    t.notMatch(screen, /speech goes to the speaker/, 'the start never promises a speaker');
    t.notMatch(screen, /\\n/, 'no literal \\n');
    t.notMatch(screen, /ALSA lib|audio open error/, 'no device dump');
    t.notMatch(screen, /DEBUG=record|Enable debugging/, "no recorder library's advice");
    t.match(screen, /microphone: no microphone \(arecord found no capture device\)/, 'the microphone failure in our words');
    const failures = lines.filter((l) => /failed|no microphone|no sound card/.test(l)).map((l) => l.replace(/^\d\d:\d\d:\d\d /, '').replace(/\d+ ms/g, '# ms'));
    t.same(failures, [...new Set(failures)], 'no failure printed twice');
    t.notOk(
      lines.some((l) => / failed: /.test(l) && /speak|speaker/.test(l)),
      'speech does not fail: it goes to files',
    );
    t.ok(files.length >= 1 && files.every((f) => f.endsWith('.wav')), `speech saved as WAV files: ${files.join(', ')}`);
  });

  t.test('--verbose shows what the device printed, a line of its own each', async (t) => {
    t.match(verbose.screen, /\| ALSA lib|\| aplay: .*audio open error/, "aplay's output under --verbose");
    t.notMatch(verbose.screen, /\\n/, 'still no literal \\n');
  });
});
