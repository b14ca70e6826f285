// `cortexd run default` on a real pseudo-terminal: colours as escape sequences, NO_COLOR, what the robot says, the start lines, the restored mode, Ctrl-D, a replayed microphone said as one.
import { requireBuild, requireCommands } from '../helpers/requires.js';
import t from 'tap';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultAgentDir } from '../helpers/default-agent.js';
import { runInPty, visible, type PtyRun } from '../helpers/pty.js';

requireBuild();
requireCommands(['script']);
const ESC = '\x1b';

/** Stops the agent as a person does (Ctrl-C) and waits for its exit code. */
async function stop(run: PtyRun): Promise<number> {
  run.type('\x03');
  await run.waitFor(/stopped \(exit 0\)/, 30_000);
  return run.exited;
}

t.test('a first run: colours reach the terminal, the start lines say where speech goes and where WebSim is, spoken sentences show', async (t) => {
  const d = await defaultAgentDir();
  const run = runInPty(['run', '--config', d.config], { CORTEX_STATE_DIR: d.state, NO_COLOR: '' });
  t.teardown(() => void run.child.kill('SIGKILL'));

  await run.waitFor(/WebSim: http:\/\/127\.0\.0\.1:\d+\//);
  await run.waitFor(/says "I'm resting now\. Say hello to chat\."/);
  const start = run.screen();
  t.ok(
    start.includes(`${ESC}[36mcortexd: agent default starting in mode idle (Idle)${ESC}[0m`),
    'the start line is cyan, as an escape sequence the terminal interprets',
  );
  t.notMatch(start, /\\u001b/, 'no colour code is printed as text');
  const text = visible(start);
  t.match(text, new RegExp(`speech goes to WAV files in ${join(d.state, 'speech').replace(/[/.]/g, '\\$&')}; hear the newest: aplay`));
  // The generated token rides in the address's fragment: a person opens it as printed and may act.
  const token = readFileSync(join(d.state, 'websim-token'), 'utf8').trim();
  t.match(text, new RegExp(`WebSim: http://127\\.0\\.0\\.1:${d.port}/#token=`));
  t.ok(text.replace(/\s+/g, '').includes(`#token=${token}(openitinabrowsertowatchandact)`), 'the whole address with the token, then how to use it');
  t.match(text, /type a line and press Enter to talk to it; Ctrl-C stops/);

  // Typed text is heard; the greeting of conversation is spoken.
  let mark = run.screen().length;
  run.type('hello\r');
  await run.waitFor(/says "Switching from idle to conversation\. What shall we talk about\?"/, 20_000, mark);
  t.match(
    visible(run.screen().slice(mark)),
    /heard \(TextInput\): hello\n.*mode idle \(Idle\) -> conversation \(Conversation\) \(input_triggered: keyword "hello"\)/,
  );

  // In sleep, which has no speak action, an answer is shown as not spoken.
  mark = run.screen().length;
  run.type('good night\r');
  await run.waitFor(/-> sleep \(Sleep\)/, 20_000, mark);
  mark = run.screen().length;
  run.type('what is your name\r');
  await run.waitFor(/not spoken: mode sleep has no speak action/, 20_000, mark);
  t.match(visible(run.screen().slice(mark)), /model gen-4o-mini \d+ ms, \d+ CU: "My name is Pip\." \(not spoken: mode sleep has no speak action\)/);

  mark = run.screen().length;
  t.equal(await stop(run), 0);
  const end = visible(run.screen().slice(mark));
  t.match(end, /stopping \(SIGINT\)\.\.\./);
  t.match(
    end,
    /not spoken \(mode sleep has no speak action\): on_shutdown message "Goodbye, see you soon\."/,
    'the goodbye of a mode without speech says it was not spoken',
  );
  t.notMatch(run.screen(), /\\u001b/, 'no escaped control character anywhere on the screen');

  // The next run starts in the remembered mode and says so, with the way to start fresh.
  const again = runInPty(['run', '--config', d.config], { CORTEX_STATE_DIR: d.state });
  t.teardown(() => void again.child.kill('SIGKILL'));
  await again.waitFor(/type a line/);
  const restored = visible(again.screen());
  t.match(restored, /starting in mode sleep \(Sleep\)/);
  t.match(
    restored,
    new RegExp(
      `mode sleep was restored from the last run \\(mode memory\\); \`cortexd run --config ${d.config.replace(/[/.]/g, '\\$&')} --fresh\` starts in idle \\(Idle\\)`,
    ),
  );
  t.equal(await stop(again), 0);

  const fresh = runInPty(['run', '--config', d.config, '--fresh'], { CORTEX_STATE_DIR: d.state });
  t.teardown(() => void fresh.child.kill('SIGKILL'));
  await fresh.waitFor(/type a line/);
  t.match(visible(fresh.screen()), /starting in mode idle \(Idle\)/);
  t.notMatch(visible(fresh.screen()), /restored/);
  t.equal(await stop(fresh), 0);
});

t.test('NO_COLOR=1: no colour code at all, warnings included; Ctrl-D is said once and the agent runs on', async (t) => {
  const d = await defaultAgentDir();
  const run = runInPty(['run', '--config', d.config], { CORTEX_STATE_DIR: d.state, NO_COLOR: '1' });
  t.teardown(() => void run.child.kill('SIGKILL'));
  await run.waitFor(/says "I'm resting now/);
  const mark = run.screen().length;
  run.type('\x04');
  await run.waitFor(/warning \(idle\): typed input ended \(stdin closed\); text from WebSim still reaches the agent/, 20_000, mark);
  // A switch makes a new typed-text input, which finds stdin ended too: the warning is not repeated.
  const { webSimClient } = await import('../helpers/default-agent.js');
  const sim = await webSimClient(d.port);
  t.teardown(() => sim.close());
  sim.switchMode('explore');
  await run.waitFor(/-> explore \(Explore\)/, 20_000, mark);
  await run.waitFor(/says "Let me look around\."/, 20_000, mark);
  sim.switchMode('idle');
  await run.waitFor(/-> idle \(Idle\)/, 20_000, mark);
  t.equal(await stop(run), 0);
  const screen = run.screen();
  t.notOk(screen.includes(ESC), 'not one escape sequence under NO_COLOR=1');
  t.equal(visible(screen).match(/typed input ended/g)?.length, 1, 'Ctrl-D is said once');
});

t.test('a replayed microphone says so on screen: at the start of its mode, and on what it hears', async (t) => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const state = mkdtempSync(join(tmpdir(), 'cortexd-replayed-'));
  t.teardown(() => rmSync(state, { recursive: true, force: true }));
  // --simulate replays a recording into the voice template's microphone ("turn left", looped).
  const run = runInPty(['run', 'conversation', '--simulate', '--fresh', '--websim-port', '0'], { CORTEX_STATE_DIR: state, NO_COLOR: '1' });
  t.teardown(() => void run.child.kill('SIGKILL'));
  await run.waitFor(/heard \(SpeechlabASRInput, from the recording turn_left\.wav\): turn left/, 60_000);
  const screen = visible(run.screen());
  t.match(screen, /SpeechlabASRInput hears a recording \(turn_left\.wav, replayed\), not a microphone/, 'the start of the mode says it');
  t.notMatch(screen, /heard \(SpeechlabASRInput\):/, 'nothing it hears looks like a person');
  t.equal(await stop(run), 0);
});
