// Talking to the shipped conversation agent from WebSim in Chromium: a fake microphone playing an espeak-ng WAV is heard by the local recognizer, switches the mode on its keyword and is answered; the page plays the robot's speech; the token rule and the flood bound hold for the microphone.
import { requireBuild, requireCommands, requireFile } from '../helpers/requires.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startAgent } from '../helpers/agent-process.js';
import { freePort } from '../helpers/default-agent.js';
import type { AgentEvent } from '../../src/cortex/events.js';

t.setTimeout(300_000);

const ROOT = join(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const OUT = join(ROOT, 'test-output');
requireBuild({ page: true });
requireFile(CHROMIUM, 'apt-get install chromium; bash scripts/setup.sh --tests installs it');
requireCommands(['espeak-ng', 'sox', 'pocketsphinx_continuous']);

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

const tmp = mkdtempSync(join(tmpdir(), 'cortexd-voice-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

/** A person saying "hello robot" (espeak-ng), as the 16 kHz mono WAV Chromium's fake microphone plays in a loop, with a pause after it. */
function spokenWav(text: string): string {
  const raw = join(tmp, 'raw.wav');
  const wav = join(tmp, 'voice.wav');
  const speak = spawnSync('espeak-ng', ['-v', 'en-us', '-s', '140', '-w', raw, text]);
  if (speak.status !== 0) throw new Error(`espeak-ng failed: ${speak.stderr}`);
  const conv = spawnSync('sox', [raw, '-r', '16000', '-c', '1', '-b', '16', wav, 'pad', '0.5', '3']);
  if (conv.status !== 0) throw new Error(`sox failed: ${conv.stderr}`);
  return wav;
}

/** The shipped conversation configuration with WebSim on `port`, run on the embedded service. */
function conversationConfig(port: number): string {
  const text = readFileSync(join(ROOT, 'config', 'conversation.json5'), 'utf8');
  const edited = text.replaceAll('simulators: [{ type: "WebSim" }]', `simulators: [{ type: "WebSim", config: { port: ${port} } }]`);
  if (edited === text) throw new Error('config/conversation.json5 lists no WebSim simulator');
  const file = join(tmp, 'conversation.json5');
  writeFileSync(file, edited);
  return file;
}

let browser: Browser | undefined;
t.teardown(() => browser?.close());

async function openPage(url: string, alive: () => boolean): Promise<Page> {
  browser ??= await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${spokenWav('hello robot')}`,
    ],
  });
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 1100 } })).newPage();
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await page.goto(url);
      await page.locator('#status[data-state="open"]').waitFor({ timeout: 10_000 });
      return page;
    } catch (err) {
      if (Date.now() > deadline || !alive()) throw err;
      await new Promise((r) => setTimeout(r, 300));
    }
  }
}

t.test('the browser microphone is the agent microphone and the robot speaks in the page', async (t) => {
  const port = await freePort();
  const state = join(tmp, 'state');
  const agent = startAgent(conversationConfig(port), state, ['--for', '200s', '--fresh'], { CORTEX_BASE_URL: '', CORTEX_ASR_WS_URL: '', OM_API_KEY: '' });
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const alive = () => agent.exitedAt() === undefined;
  await agent.waitFor((e) => e.type === 'simulator.ready', 60_000, 'WebSim ready');
  const tokenFile = join(state, 'websim-token');
  const token = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : '';
  t.ok(token, 'WebSim generated its token');

  // A page that only watches may not use the microphone.
  const viewer = await openPage(`http://127.0.0.1:${port}/`, alive);
  await viewer.locator('#mic-button').click();
  await viewer.locator('#voice-note.bad').waitFor({ timeout: 10_000 });
  t.match(await viewer.locator('#voice-note').textContent(), /mic\.start needs the WebSim token/, 'the microphone needs the token, as typing does');
  t.equal(await viewer.locator('#mic-button').getAttribute('aria-pressed'), 'false');
  await viewer.close();

  // The page opened from the address the agent prints: quiet first (manual switch), then talk.
  const page = await openPage(`http://127.0.0.1:${port}/#token=${token}`, alive);
  await page.locator('#access[data-state="unlocked"]').waitFor({ timeout: 10_000 });
  await page.locator('#switch-buttons button[data-mode="quiet"]').click();
  await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'quiet', 30_000, 'manual switch to quiet');
  await page.locator('#mic-button').click();
  await page.locator('#mic-button[data-state="on"]').waitFor({ timeout: 15_000 });
  t.match(await page.locator('#voice-note').textContent(), /Talking: the robot hears this page/);

  // "hello robot" through the browser, the local service's pocketsphinx, the wake keyword of quiet.
  const heard = await agent.waitFor<Ev<'input'>>(
    (e) => e.type === 'input' && e.final && e.input === 'SpeechlabASRInput' && /hello/.test(e.text),
    90_000,
    'a final transcript of the browser audio',
  );
  t.match(heard.text, /hello/, `the recognizer heard the browser: "${heard.text}"`);
  const switched = await agent.waitFor<Ev<'mode.changed'>>(
    (e) => e.type === 'mode.changed' && e.from === 'quiet' && e.to === 'conversation',
    60_000,
    'keyword switch',
  );
  t.equal(switched.trigger, 'input_triggered', 'the spoken keyword switched the mode');
  const answer = await agent.waitFor<Ev<'model.answer'>>((e) => e.type === 'model.answer' && e.mode === 'conversation', 90_000, 'the model answers');
  t.ok(answer, 'the agent answered what it heard');

  // The fake microphone repeats "hello robot", which barges in on the robot's answers (allow_interruption):
  // stop talking, then a greeting nobody interrupts: back to quiet and into conversation by the buttons.
  await page.locator('#mic-button').click();
  await page.locator('#mic-button[data-state="off"]').waitFor({ timeout: 10_000 });
  const stopsWhileTalking = Number((await page.locator('#robot-voice').getAttribute('data-stops')) ?? 0);
  t.comment(`sentences stopped in the page while the browser talked over the robot: ${stopsWhileTalking}`);
  const before = agent.events.length;
  await page.locator('#switch-buttons button[data-mode="quiet"]').click();
  await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'quiet' && agent.events.indexOf(e) >= before, 30_000, 'back to quiet');
  await page.locator('#switch-buttons button[data-mode="conversation"]').click();
  await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'conversation' && agent.events.indexOf(e) >= before, 30_000, 'into conversation');

  // The page received the greeting and played it (the audio element's played time grows).
  await page
    .waitForFunction(() => Number(document.querySelector('#robot-voice')?.dataset.playedMs ?? 0) > 300, undefined, { timeout: 60_000 })
    .catch(async (err: Error) => {
      // What the page and the agent did, so a failure says where the speech stopped.
      const voice = await page.evaluate(() => ({ ...document.querySelector('#robot-voice')?.dataset }));
      const speech = agent.events.filter((e) => e.type === 'action' && e.label === 'speak').slice(-6);
      t.comment(`page voice: ${JSON.stringify(voice)}; last speak actions: ${JSON.stringify(speech)}`);
      throw err;
    });
  const clips = Number(await page.locator('#robot-voice').getAttribute('data-clips'));
  t.ok(clips >= 1, `the page received ${clips} sentence(s) of speech and played them`);
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, 'websim-voice.png'), fullPage: true });
  t.equal(agent.events.filter((e) => e.type === 'error' && /microphone/.test(e.message) && /websim/i.test(e.message)).length, 0, 'no microphone error');
});

// The callbacks of page.evaluate run in Chromium, where this exists (the test tsconfig has no DOM library).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;
