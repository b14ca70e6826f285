// The browser's Talk and Hear on a machine without a sound card, for each shipped voice configuration and two microphones (speech in faint noise, speech in digital silence): heard, answered, played in the page.
import { requireBuild, requireCommands, requireFile } from '../helpers/requires.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { MAIN, startAgent } from '../helpers/agent-process.js';
import { freePort } from '../helpers/default-agent.js';
import type { AgentEvent } from '../../src/cortex/events.js';

// Six agents, one after another, each hearing the browser and answering: a hang guard on a loaded machine.
t.setTimeout(900_000);

const ROOT = join(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const OUT = join(ROOT, 'test-output');
requireBuild({ page: true });
requireFile(CHROMIUM, 'apt-get install chromium; bash scripts/setup.sh --tests installs it');
requireCommands(['espeak-ng', 'sox', 'pocketsphinx_continuous']);

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

const tmp = mkdtempSync(join(tmpdir(), 'cortexd-voice-matrix-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));

function sox(args: string[]): void {
  const r = spawnSync('sox', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`sox ${args.join(' ')}: ${r.stderr}`);
}

/**
 * "hello robot" (espeak-ng) as the 16 kHz WAV Chromium's fake microphone loops: a pause before (half
 * a second; three of zeros), ten seconds after (the robot answers in that pause), in `kind` of
 * background: faint white noise (a real room) or digital silence, every sample zero (a file, a virtual
 * microphone).
 */
function microphoneFile(kind: 'noise' | 'zeros'): string {
  const raw = join(tmp, 'raw.wav');
  if (!existsSync(raw)) {
    const speak = spawnSync('espeak-ng', ['-v', 'en-us', '-s', '140', '-w', raw, 'hello robot']);
    if (speak.status !== 0) throw new Error(`espeak-ng failed: ${speak.stderr}`);
  }
  const padded = join(tmp, `padded-${kind}.wav`);
  // Seconds of digital silence before the words too: what a file or a virtual microphone gives between takes.
  sox([raw, '-r', '16000', '-c', '1', '-b', '16', padded, 'pad', kind === 'zeros' ? '3' : '0.5', '10']);
  const out = join(tmp, `mic-${kind}.wav`);
  if (kind === 'zeros') sox([padded, out]);
  else {
    const noise = join(tmp, 'noise.wav');
    const seconds = spawnSync('soxi', ['-D', padded], { encoding: 'utf8' }).stdout.trim();
    sox(['-n', '-r', '16000', '-c', '1', '-b', '16', noise, 'synth', seconds, 'whitenoise', 'vol', '0.003']);
    sox(['-m', padded, noise, out]);
  }
  return out;
}

/** The configuration file to run with WebSim on `port`: a shipped one, or one `cortexd init` wrote in a person's own folder. */
function configFile(which: string, port: number): string {
  let source: string;
  if (which === 'init --template voice') {
    const home = join(tmp, `project-${port}`);
    mkdirSync(home, { recursive: true });
    const init = spawnSync(process.execPath, [MAIN, 'init', 'my_voice', '--template', 'voice'], {
      cwd: home,
      encoding: 'utf8',
      env: { ...process.env, CORTEX_CONFIG_DIR: '' },
    });
    if (init.status !== 0) throw new Error(`cortexd init failed: ${init.stdout}${init.stderr}`);
    source = join(home, 'config', 'my_voice.json5');
  } else source = join(ROOT, 'config', `${which}.json5`);
  const text = readFileSync(source, 'utf8');
  const edited = text.replaceAll('simulators: [{ type: "WebSim" }]', `simulators: [{ type: "WebSim", config: { port: ${port} } }]`);
  if (edited === text) throw new Error(`${source} lists no WebSim simulator`);
  const file = source.startsWith(ROOT) ? join(tmp, `${which}-${port}.json5`) : source;
  writeFileSync(file, edited.replaceAll('${CONFIG_DIR}/media/', `${join(ROOT, 'config', 'media')}/`));
  return file;
}

const CONFIGS = [
  // The companion: its explore mode is the one with a microphone (a replayed file, which the page's replaces while it talks).
  { name: 'default', mode: 'explore' },
  { name: 'conversation', mode: undefined },
  { name: 'init --template voice', mode: undefined },
] as const;

let browser: Browser | undefined;

async function openPage(url: string, alive: () => boolean): Promise<Page> {
  const page = await (await browser!.newContext({ viewport: { width: 1400, height: 1100 } })).newPage();
  const deadline = Date.now() + 60_000;
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

for (const kind of ['noise', 'zeros'] as const) {
  t.test(`a microphone of speech in ${kind === 'noise' ? 'faint noise' : 'digital silence'}`, async (t) => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--autoplay-policy=no-user-gesture-required',
        '--use-fake-ui-for-media-stream',
        '--use-fake-device-for-media-stream',
        `--use-file-for-fake-audio-capture=${microphoneFile(kind)}`,
      ],
    });
    t.teardown(() => browser?.close());
    for (const c of CONFIGS) {
      await t.test(`${c.name}: heard, answered and played in the page`, async (t) => {
        const port = await freePort();
        const state = join(tmp, `state-${kind}-${port}`);
        // On a machine without a sound card (as CI) the player fails and speech falls back to files; the page is the voice either way.
        const agent = startAgent(configFile(c.name, port), state, ['--for', '240s', '--fresh'], {
          CORTEX_BASE_URL: '',
          CORTEX_ASR_WS_URL: '',
          OM_API_KEY: '',
        });
        t.teardown(() => void agent.child.kill('SIGKILL'));
        const alive = () => agent.exitedAt() === undefined;
        await agent.waitFor((e) => e.type === 'simulator.ready', 90_000, 'WebSim ready');
        const token = readFileSync(join(state, 'websim-token'), 'utf8').trim();
        const page = await openPage(`http://127.0.0.1:${port}/#token=${token}`, alive);
        await page.locator('#access[data-state="unlocked"]').waitFor({ timeout: 15_000 });
        if (c.mode) {
          await page.locator(`#switch-buttons button[data-mode="${c.mode}"]`).click();
          await agent.waitFor((e) => e.type === 'mode.changed' && e.to === c.mode, 30_000, `switch to ${c.mode}`);
        }
        await page.locator('#mic-button').click();
        await page.locator('#mic-button[data-state="on"]').waitFor({ timeout: 15_000 });
        const talkedAt = agent.events.length;

        const heard = await agent.waitFor<Ev<'input'>>(
          (e) => e.type === 'input' && e.final && agent.events.indexOf(e) >= talkedAt && /hello|robot/.test(e.text),
          90_000,
          `a final transcript of the browser's ${kind} microphone`,
        );
        t.match(heard.text, /hello|robot/, `the recognizer heard the page: "${heard.text}"`);
        await page
          .waitForFunction(() => Number(document.querySelector('#robot-voice')?.dataset.playedMs ?? 0) > 300, undefined, { timeout: 90_000 })
          .catch(async (err: Error) => {
            const voice = await page.evaluate(() => ({ ...document.querySelector('#robot-voice')?.dataset }));
            const speech = agent.events.filter((e) => e.type === 'action' && e.label === 'speak').slice(-6);
            t.comment(`page voice: ${JSON.stringify(voice)}; last speak actions: ${JSON.stringify(speech)}`);
            throw err;
          });
        const played = Number(await page.locator('#robot-voice').getAttribute('data-played-ms'));
        t.ok(played > 300, `the page played ${played} ms of the robot's speech`);
        mkdirSync(OUT, { recursive: true });
        await page.screenshot({ path: join(OUT, `websim-voice-${kind}-${c.name.replace(/\W+/g, '_')}.png`), fullPage: true });
        await page.context().close();
        agent.child.kill('SIGINT');
        await agent.exited;
      });
    }
  });
}

// The callbacks of page.evaluate run in Chromium, where this exists (the test tsconfig has no DOM library).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any;
