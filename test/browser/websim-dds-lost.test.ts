// WebSim in Chromium when a robot over DDS goes and comes back: its stream says "lost the robot" with the reason, then streams again (a real CycloneDDS ROS 2 base on loopback, killed and restarted).
import { requireBuild, requireFile } from '../helpers/requires.js';
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { startAgent, workDir } from '../helpers/agent-process.js';
import { openWebSimPage } from '../helpers/websim-page.js';
import { LOOPBACK_URI, freshDomain, startPeer } from '../helpers/dds-peers.js';

t.setTimeout(300_000);
const ROOT = join(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const OUT = join(ROOT, 'test-output');
requireBuild({ page: true });
requireFile(CHROMIUM, 'Debian package chromium: bash scripts/setup.sh --tests');
const domain = freshDomain() + 11;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let browser: Browser | undefined;
t.teardown(() => browser?.close());

t.test('a ROS 2 base killed: the page shows the robot lost with why; restarted: streaming again', async (t) => {
  let base = await startPeer('ros2_base', domain);
  t.teardown(() => base.stop());
  const w = workDir();
  const port = await freePort();
  const body = { robot: 'turtlebot4', binding: 'ros2', domain_id: domain, lost_after_seconds: 0.5 };
  const config = {
    version: 'v1.0.5',
    name: 'rover',
    default_mode: 'drive',
    allow_manual_switching: false,
    mode_memory_enabled: false,
    api_key: 'openmind_free',
    system_governance: 'Be safe.',
    service: { base_url: 'embedded' },
    cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 } },
    modes: {
      drive: {
        display_name: 'Drive',
        description: 'driven by typed words',
        system_prompt_base: 'You are a rover.',
        hertz: 2,
        agent_inputs: [
          { type: 'TextInput', config: { descriptor: 'Voice (typed)' } },
          { type: 'BodyInput', config: { ...body, facets: ['battery', 'odometry'], poll_seconds: 1 } },
        ],
        agent_actions: [{ name: 'move', llm_label: 'move', connector: 'body', config: body }],
        simulators: [{ type: 'WebSim', config: { port } }],
      },
    },
  };
  mkdirSync(w.dir, { recursive: true });
  writeFileSync(w.file('rover.json'), JSON.stringify(config));
  const agent = startAgent(w.file('rover.json'), w.state, ['--for', '200s'], { CYCLONEDDS_URI: LOOPBACK_URI, ROS_DOMAIN_ID: '' });
  t.teardown(() => void agent.child.kill('SIGKILL'));

  browser ??= await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
  await openWebSimPage(page, port, w.state, agent);
  const stream = page.locator('[data-stream^="dds:"]');
  await stream.and(page.locator('[data-state="streaming"]')).waitFor({ timeout: 60_000 });
  t.match(await stream.innerText(), /^DDS · /, 'the robot is a stream of kind dds on the page');

  await base.stop('SIGKILL');
  // The loss is kept in the stream's history (a chip whose title is the reason), whatever state the retry is in now.
  const lost = stream.locator('.chip[title*="lost the robot"]');
  await lost.first().waitFor({ state: 'attached', timeout: 30_000 });
  t.match(await lost.first().getAttribute('title'), /lost the robot: no rt\/odom from turtlebot4 for [\d.]+ s on DDS domain \d+$/);
  await stream.and(page.locator(':not([data-state="streaming"])')).waitFor({ timeout: 30_000 });
  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, 'websim-dds-lost.png'), fullPage: true });

  base = await startPeer('ros2_base', domain);
  await stream.and(page.locator('[data-state="streaming"]')).waitFor({ timeout: 60_000 });
  t.pass('streaming again once the base is back');
  await page.screenshot({ path: join(OUT, 'websim-dds-back.png'), fullPage: true });
});
