// WebSim's Recalled list in Chromium against the default agent with a knowledge base and memory: each turn's passages and memories with source and score.
import { requireBuild, requireFile } from '../helpers/requires.js';
import t from 'tap';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { startAgent } from '../helpers/agent-process.js';
import { defaultAgentDir, webSimClient, webSimToken } from '../helpers/default-agent.js';

const ROOT = join(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const OUT = join(ROOT, 'test-output');
requireBuild({ page: true });
requireFile(CHROMIUM, 'apt-get install chromium; bash scripts/setup.sh --tests installs it');

let browser: Browser | undefined;
t.teardown(() => browser?.close());

t.test('typed questions show their passages and the memories of the visitor in the Recalled list', async (t) => {
  // The shipped default agent, with the museum corpus as its knowledge base and memory on.
  const d = await defaultAgentDir((text) =>
    text.replace(/^\{/m, '{\n  knowledge_base: { knowledge_base_name: "museum", knowledge_base_root: "docs" },\n  memory: { enabled: true },'),
  );
  cpSync(join(ROOT, 'test', 'fixtures', 'knowledge', 'museum'), join(d.dir, 'docs'), { recursive: true });
  const agent = startAgent(d.config, d.state, ['--for', '90s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'tick', 20_000, 'first tick');

  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await page.goto(`http://127.0.0.1:${d.port}/#token=${webSimToken(d.port)}`);
  await page.locator('#status[data-state="open"]').waitFor({ timeout: 20_000 });
  await page.locator('#recalled li.note').waitFor();
  t.match(await page.locator('#recalled').textContent(), /nothing recalled yet/);

  const sim = await webSimClient(d.port);
  t.teardown(() => sim.close());
  sim.say('Hello, my name is Ada. I take my coffee black.');
  // "Hello" switches idle to conversation (a keyword rule): what the line told is remembered all the same.
  await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'conversation', 20_000, 'the switch to conversation');
  sim.say('Where can I get a coffee?');
  await page.locator('#recalled li[data-source="services/cafe.md"]').waitFor({ timeout: 20_000 });
  const fact = page.locator('#recalled li[data-kind="fact"]');
  await fact.waitFor();
  t.match(await fact.textContent(), /fact of Ada \(memory:\d+\).*I take my coffee black/);
  t.match(await page.locator('#recalled li[data-source="services/cafe.md"] .badge').textContent(), /^\d\.\d\d$/, 'with its score');
  mkdirSync(OUT, { recursive: true });
  await page.locator('#model-panel').screenshot({ path: join(OUT, 'websim-recalled.png') });

  sim.say('Do you have a swimming pool?');
  await page.locator('#recalled li.note', { hasText: 'no passage or memory fits' }).waitFor({ timeout: 20_000 });
});
