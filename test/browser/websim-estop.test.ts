// WebSim's e-stop in Debian's Chromium against the real default agent: the big button latches, motion is refused, release needs the token typed.
import { requireBuild, requireFile } from '../helpers/requires.js';
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import JSON5 from 'json5';
import { chromium, type Browser } from 'playwright-core';
import { startAgent, workDir } from '../helpers/agent-process.js';
import type { AgentEvent } from '../../src/cortex/events.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
requireBuild({ page: true });
requireFile(join(ROOT, 'dist', 'websim', 'estop.js'), 'run npm run build');
requireFile(CHROMIUM, 'apt-get install chromium; bash scripts/setup.sh --tests installs it');
const OUT = join(ROOT, 'test-output');
const TOKEN = 'estop-test-token-0123456789abcdef';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** config/default.json5 with WebSim on `port` in every mode, the e-stop socket off (the test needs none). */
function defaultConfig(dir: string, port: number): string {
  const text = readFileSync(join(ROOT, 'config', 'default.json5'), 'utf8').replaceAll('${CONFIG_DIR}', join(ROOT, 'config'));
  const config = JSON5.parse(text) as { modes: Record<string, { simulators?: unknown[] }>; safety?: unknown };
  for (const mode of Object.values(config.modes)) mode.simulators = [{ type: 'WebSim', config: { port } }];
  config.safety = { estop_socket: { enabled: false } };
  const file = join(dir, 'default.json5');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

let browser: Browser | undefined;
t.teardown(() => browser?.close());

t.test('the e-stop button latches, later motion is refused, a wrong token does not release, the right one does', async (t) => {
  const w = workDir();
  const port = await freePort();
  const agent = startAgent(defaultConfig(w.dir, port), w.state, ['--for', '120s'], { CORTEX_WEBSIM_TOKEN: TOKEN });
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'agent.started', 20_000, 'agent.started');
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await page.goto(`http://127.0.0.1:${port}/?token=${TOKEN}`);
      break;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  await page.locator('#status[data-state="open"]').waitFor({ timeout: 10_000 });
  t.equal(await page.locator('#estop-release').isHidden(), true, 'no release form while not latched');

  // In explore, typed orders move the (console) body.
  await page.fill('#talk-text', "let's explore");
  await page.click('#talk-send');
  await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'explore', 20_000, 'explore');
  await page.click('#estop-button');
  const estop = await agent.waitFor<Ev<'safety'>>((e) => e.type === 'safety' && e.kind === 'estop', 5000, 'the estop event');
  t.match(estop, { source: 'websim', reason: 'WebSim emergency stop button' });
  await page.locator('#estop[data-latched="true"]').waitFor({ timeout: 5000 });
  t.match(await page.locator('#estop-status').textContent(), /LATCHED by websim: WebSim emergency stop button/);

  await page.fill('#talk-text', 'turn left');
  await page.click('#talk-send');
  const refused = await agent.waitFor<Ev<'action'>>((e) => e.type === 'action' && e.label === 'move' && e.state === 'failed', 20_000, 'the refused move');
  t.match(refused.error, /refused by the safety governor: emergency stop latched \(websim/);
  const prompt = await agent.waitFor<Ev<'prompt'>>((e) => e.type === 'prompt' && e.at > estop.at, 5000, 'a prompt after the e-stop');
  t.match(prompt.prompt, /SAFETY: motion is disabled/);
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, 'websim-estop-latched.png') });

  await page.fill('#estop-token', 'not-the-token');
  await page.click('#estop-release-button');
  await page.locator('#estop-note', { hasText: 'Not released: wrong WebSim token' }).waitFor({ timeout: 5000 });
  t.equal(await page.locator('#estop').getAttribute('data-latched'), 'true', 'still latched');

  await page.fill('#estop-token', TOKEN);
  await page.click('#estop-release-button');
  await page.locator('#estop[data-latched="false"]').waitFor({ timeout: 5000 });
  t.match(await agent.waitFor((e) => e.type === 'safety' && e.kind === 'release', 5000, 'release'), { source: 'websim' });
  await page.fill('#talk-text', 'turn right');
  await page.click('#talk-send');
  await agent.waitFor(
    (e) => e.type === 'action' && e.label === 'move' && e.state === 'done' && (e.value as { action?: string }).action === 'turn right',
    20_000,
    'a move after the release',
  );
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});
