// WebSim's operator panels in Chromium against the real default agent: camera frame, microphone level, conversation, timeline, sockets (also in a reconnect storm, with the terminal beside it), chart zoom and pan.
import { requireBuild, requireCommands, requireFile } from '../helpers/requires.js';
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startAgent, type AgentProcess } from '../helpers/agent-process.js';
import { defaultAgentDir, webSimClient, webSimToken } from '../helpers/default-agent.js';
import { runInPty, visible } from '../helpers/pty.js';
import { startService } from '../../src/service/index.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import { createLogger } from '../../src/log.js';

// The callbacks of page.evaluate run in Chromium, where these exist (the test tsconfig has no DOM library).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, window: any;

const ROOT = join(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const OUT = join(ROOT, 'test-output');
requireBuild({ page: true });
requireFile(CHROMIUM, 'apt-get install chromium; bash scripts/setup.sh --tests installs it');
requireCommands(['script']);

let browser: Browser | undefined;
t.teardown(() => browser?.close());

/** Opens the page, retrying while the agent's WebSim is not listening yet. */
async function openPage(port: number, alive: () => boolean): Promise<Page> {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      // The address the terminal prints: the generated token in the fragment (acting needs it).
      const token = webSimToken(port);
      if (!token) throw new Error('no WebSim token yet');
      await page.goto(`http://127.0.0.1:${port}/#token=${token}`);
      await page.locator('#status[data-state="open"]').waitFor({ timeout: 10_000 });
      return page;
    } catch (err) {
      if (Date.now() > deadline || !alive()) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const width = (page: Page) => page.locator('#graph > svg').evaluate((e) => (e as { getBoundingClientRect(): { width: number } }).getBoundingClientRect().width);

t.test('explore on the page: the camera frame, the microphone level, the conversation, the timeline and the sockets', async (t) => {
  const d = await defaultAgentDir();
  const agent: AgentProcess = startAgent(d.config, d.state, ['--for', '150s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const page = await openPage(d.port, () => agent.exitedAt() === undefined);

  // Zoom and pan of the statechart: the drawing keeps its proportions and text size follows the zoom.
  await page.locator('#graph g.node.current[data-mode="idle"]').waitFor();
  await page.locator('#graph-tools button[data-zoom="1"]').click();
  const natural = await width(page);
  await page.locator('#graph-tools button[data-zoom="in"]').click();
  await page.locator('#graph-tools button[data-zoom="in"]').click();
  t.ok(Math.abs((await width(page)) / natural - 1.5625) < 0.02, 'two zoom-ins make it 1.56 times as wide');
  t.equal(await page.locator('#zoom-level').textContent(), '156%');
  const view = page.locator('#graph');
  const box = (await view.boundingBox())!;
  const before = await view.evaluate((e) => e.scrollLeft);
  await page.mouse.move(box.x + box.width / 2, box.y + 100);
  await page.mouse.down();
  await page.mouse.move(box.x + box.width / 2 + 250, box.y + 100, { steps: 5 });
  await page.mouse.up();
  t.ok(before >= 250, `zooming in kept the centre in view (scrolled ${before} px)`);
  t.equal(await view.evaluate((e) => e.scrollLeft), before - 250, 'dragging 250 px to the right shows 250 px more of the left');
  await page.locator('#graph-tools button[data-zoom="fit"]').click();
  t.ok((await width(page)) <= (await view.evaluate((e) => e.clientWidth)), 'Fit shows the whole width');

  // A manual switch to explore: camera, microphone and speech recognition run.
  await page.locator('#switch-buttons button[data-mode="explore"]').click();
  await page.locator('#graph g.node.current[data-mode="explore"]').waitFor({ timeout: 15_000 });
  const img = page.locator('#camera-frame');
  await img.waitFor({ state: 'visible', timeout: 20_000 });
  await page.waitForFunction(
    () => {
      const i = document.getElementById('camera-frame') as { complete: boolean; naturalWidth: number } | null;
      return Boolean(i && i.complete && i.naturalWidth > 0);
    },
    undefined,
    { timeout: 20_000 },
  );
  t.same(
    await img.evaluate((e) => [(e as { naturalWidth: number }).naturalWidth, (e as { naturalHeight: number }).naturalHeight]),
    [640, 480],
    'a real 640x480 frame of the synthetic camera',
  );
  t.equal(await page.locator('#camera-badge').textContent(), 'LocalVLMInput');
  await page.locator('#mic-meter[data-rms]').waitFor({ timeout: 15_000 });
  t.match(await page.locator('#mic-note').textContent(), /^SpeechlabASRInput: -?\d+\.\d dBFS \(peak -?\d+\.\d\)/);

  // The conversation: the replayed "turn left" heard, and what the robot said.
  await page.locator('#transcript li.said', { hasText: 'Let me look around.' }).waitFor({ timeout: 20_000 });
  await page.locator('#transcript li.heard', { hasText: 'turn left' }).waitFor({ timeout: 30_000 });
  await page.locator('#transcript li.said', { hasText: /turn left/i }).waitFor({ timeout: 20_000 });

  // The last voice turn: its stages from the end of speech (the robot's voice detector), as bars with their ms.
  await page.locator('#turn-panel:not([hidden]) .note', { hasText: 'from speech end' }).waitFor({ timeout: 30_000 });
  const stages = await page.locator('#turn .turn-stage').allTextContents();
  t.ok(
    ['speech end', 'final transcript', 'request sent'].every((x) => stages.includes(x)),
    `the turn's stages: ${stages.join(', ')}`,
  );
  t.match(await page.locator('#turn .note').textContent(), /(spoken|silent|interrupted) · (streamed|not streamed) · \d+ of \d+ sentences · from speech end/);
  t.ok(
    (await page.locator('#turn .turn-ms').allTextContents()).every((x) => /^\d+ ms$/.test(x)),
    'each stage with its ms',
  );

  // The sockets panel and the timeline.
  await page.locator('#streams [data-stream="asr:SpeechlabASRInput"][data-state="streaming"]').waitFor({ timeout: 10_000 });
  t.match(await page.locator('#streams [data-stream="asr:SpeechlabASRInput"]').textContent(), /streaming since/);
  await page.locator('#timeline rect.bar-model').first().waitFor({ timeout: 10_000 });
  t.ok((await page.locator('#timeline rect.bar-action').count()) >= 2, 'actions are on the timeline');
  t.match(await page.locator('#timeline rect.bar-model title').first().textContent(), /explore tick \d+ · gen-4o-mini · \d+ ms · \d+ CU · /);
  t.match(await page.locator('#calls li').first().textContent(), /explore #\d+ · gen-4o-mini · \d+ ms · \d+ CU · /);

  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, 'websim-explore.png'), fullPage: true });
  await page.close();
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});

t.test('a reconnect storm: the terminal prints a line or two, the sockets panel shows the state changes', async (t) => {
  const d = await defaultAgentDir();
  const svc = await startService({ port: 0, dbPath: join(d.dir, 'cloud.sqlite'), logger: createLogger({ level: 'silent' }), jwtSecret: 's'.repeat(32) });
  t.teardown(() => svc.close());
  const apiKey = svc.admin.createApiKey('robot').apiKey;
  // Every recognition socket is dropped 1.5 s after it opens.
  const proxy = await startFaultProxy({ target: svc.url, script: { cutAfterMs: 1500, sockets: ['speechlab'] } });
  t.teardown(() => proxy.close());
  const text = readFileSync(d.config, 'utf8').replace(
    /service: \{[^}]*\}/,
    `service: { base_url: "${proxy.url}", ws_base_url: "${proxy.wsUrl}", asr_ws_url: "${proxy.wsUrl}/asr", vlm_ws_url: "${proxy.wsUrl}/vlm" }`,
  );
  writeFileSync(d.config, text);

  const run = runInPty(['run', '--config', d.config], { CORTEX_STATE_DIR: d.state, OM_API_KEY: apiKey });
  t.teardown(() => void run.child.kill('SIGKILL'));
  await run.waitFor(/type a line/);
  const sim = await webSimClient(d.port);
  t.teardown(() => sim.close());
  // A switch asked while idle's entry hooks run is refused: ask again until it happens.
  for (let i = 0; ; i++) {
    const mark = run.screen().length;
    sim.switchMode('explore');
    try {
      await run.waitFor(/-> explore \(Explore\)/, 3000, mark);
      break;
    } catch (err) {
      if (i >= 10) throw err;
    }
  }
  await run.waitFor(/speech recognition socket \(SpeechlabASRInput\) connected/, 30_000);
  await proxy.until(() => proxy.stats().sockets.speechlab.cut >= 8, 'eight cuts of the recognition socket', 60_000);

  const page = await openPage(d.port, () => true);
  const stream = page.locator('#streams [data-stream="asr:SpeechlabASRInput"]');
  await stream.waitFor({ timeout: 10_000 });
  t.ok((await stream.locator('.chip').count()) >= 4, 'the state changes of the storm are listed');
  mkdirSync(OUT, { recursive: true });
  await page.locator('#sockets-panel').screenshot({ path: join(OUT, 'websim-sockets-storm.png') });
  await page.close();

  const cuts = proxy.stats().sockets.speechlab.cut;
  run.type('\x03');
  await run.waitFor(/stopped \(exit 0\)/, 30_000);
  const lines = visible(run.screen())
    .split('\n')
    .filter((l) => /speech recognition socket/.test(l));
  t.ok(cuts >= 8, `${cuts} cuts`);
  t.ok(lines.length <= 4, `${lines.length} socket lines on the terminal for ${cuts} cuts:\n${lines.join('\n')}`);
  t.match(lines.join('\n'), /reconnecting/);
});
