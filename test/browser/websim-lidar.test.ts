// WebSim's lidar panel in Chromium against a real agent: the simulated lidar's returns around the robot, OM1's free paths (blocked toward the wall, free away from it) and the guard's circles; a typed turn turns the drawing.
import { requireBuild, requireFile } from '../helpers/requires.js';
import t from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { startAgent, workDir } from '../helpers/agent-process.js';
import { openWebSimPage } from '../helpers/websim-page.js';

t.setTimeout(300_000);
const ROOT = join(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const OUT = join(ROOT, 'test-output');
requireBuild({ page: true });
requireFile(CHROMIUM, 'Debian package chromium: bash scripts/setup.sh --tests');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let browser: Browser | undefined;
t.teardown(() => browser?.close());

t.test('the lidar panel draws the returns, the free paths and the guard; turning left turns them', async (t) => {
  const w = workDir();
  const port = await freePort();
  const config = {
    version: 'v1.0.5',
    name: 'rover',
    default_mode: 'drive',
    allow_manual_switching: false,
    mode_memory_enabled: false,
    api_key: 'openmind_free',
    system_governance: 'Be safe.',
    service: { base_url: 'embedded', ws_base_url: 'embedded', asr_ws_url: 'embedded', vlm_ws_url: 'embedded' },
    cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 } },
    // A wall 0.9 m ahead, open space behind, a round obstacle behind on the right.
    lidar: { source: 'sim', room: { x_min: -2.5, x_max: 0.9, y_min: -2, y_max: 2, obstacles: [{ x: -0.8, y: -1, radius_m: 0.2 }] } },
    safety: { obstacle: { stop_distance_m: 0.4, slow_distance_m: 0.8, max_scan_age_ms: 500 } },
    modes: {
      drive: {
        display_name: 'Drive',
        description: 'driven by typed words',
        system_prompt_base: 'You are a rover.',
        hertz: 2,
        agent_inputs: [
          { type: 'TextInput', config: { descriptor: 'Voice (typed)' } },
          { type: 'LidarInput', config: {} },
        ],
        agent_actions: [{ name: 'move', llm_label: 'move', connector: 'body', config: { turn_deg: 90, command_seconds: 0.1 } }],
        simulators: [{ type: 'WebSim', config: { port } }],
      },
    },
  };
  mkdirSync(w.dir, { recursive: true });
  writeFileSync(w.file('rover.json'), JSON.stringify(config));
  const agent = startAgent(w.file('rover.json'), w.state, ['--for', '120s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));

  browser ??= await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
  await openWebSimPage(page, port, w.state, agent);
  await page.locator('#lidar-panel:not([hidden])').waitFor({ timeout: 30_000 });
  const view = page.locator('#lidar-view svg');
  const dots = await view.locator('g.lidar-points circle').count();
  t.ok(dots >= 300, `${dots} returns drawn (360 beams, every wall within 6 m)`);
  const pathState = async (deg: number) => view.locator(`line.lidar-path[data-deg="${deg}"]`).getAttribute('class');
  t.match(await pathState(0), /blocked/, 'the path ahead runs into the wall 0.9 m away');
  t.match(await pathState(180), /free/, 'the path back is free');
  t.equal(await view.locator('circle.lidar-stop').count(), 1, "the guard's stop circle");
  t.equal(await view.locator('circle.lidar-slow').count(), 1, "the guard's slow circle");
  await t.resolves(page.locator('#lidar-facts').getByText('0.9 m').waitFor({ timeout: 10_000 }), 'the nearest return ahead is said');
  mkdirSync(OUT, { recursive: true });
  await page.locator('#lidar-panel').screenshot({ path: join(OUT, 'websim-lidar.png') });

  // Turn left (the guard allows it: nothing within the robot's half width): the wall is then on the right, the way ahead free.
  await page.locator('#talk-text').fill('turn left');
  await page.locator('#talk-send').click();
  await t.resolves(
    page.locator('#lidar-view line.lidar-path.free[data-deg="0"]').waitFor({ state: 'attached', timeout: 60_000 }),
    'after the turn the path ahead is free',
  );
  t.match(await pathState(60), /blocked/, 'the wall is now to the right');
  await page.locator('#lidar-panel').screenshot({ path: join(OUT, 'websim-lidar-turned.png') });
});
