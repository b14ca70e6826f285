// WebSim's body panel in Chromium against a real agent: typed moves drive the simulated body, the panel draws its path and heading from BodyInput's values.
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

t.test('typed moves walk the simulated body; the panel shows its path, pose and heading', async (t) => {
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
    modes: {
      drive: {
        display_name: 'Drive',
        description: 'driven by typed words',
        system_prompt_base: 'You are a rover.',
        hertz: 2,
        agent_inputs: [{ type: 'TextInput', config: { descriptor: 'Voice (typed)' } }],
        backgrounds: [{ type: 'BodyInput', config: { robot: 'turtlebot4', facets: ['battery', 'odometry'], poll_seconds: 0.5 } }],
        agent_actions: [{ name: 'move', llm_label: 'move', connector: 'body', config: { robot: 'turtlebot4', step_m: 1, turn_deg: 90, command_seconds: 0.1 } }],
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
  // The background publishes the pose at start: the panel shows the body at the origin.
  await page.locator('#body-panel:not([hidden])').waitFor({ timeout: 30_000 });
  const facts = page.locator('#body-facts');
  await t.resolves(facts.getByText('0 m, 0 m').waitFor({ timeout: 30_000 }), 'at the origin');

  const say = async (text: string, pose: string) => {
    await page.locator('#talk-text').fill(text);
    await page.locator('#talk-send').click();
    await facts.getByText(pose).waitFor({ timeout: 60_000 });
  };
  // The embedded rule model maps "forward" to values the move action does not offer ("move forwards"), so
  // the walks are asked for by name; "turn left" is its own rule.
  await say('use move with action="walk forward"', '1 m, 0 m');
  await say('turn left', '90°');
  await say('use move with action="walk forward"', '1 m, 1 m');

  const path = await page.locator('#body-view polyline.body-path').getAttribute('points');
  // The body walks in steps, so the path holds the places it stood and may hold points on the way between them:
  // from the origin, along one axis to the corner, then along the other to the end.
  const points = (path ?? '').split(' ').map((p) => p.split(',').map(Number) as [number, number]);
  t.ok(points.length >= 3, `the path has at least the three places the body stood (${points.length})`);
  const [first, last] = [points[0]!, points.at(-1)!];
  const corner = points.find((p) => (p[0] === last[0] && p[1] === first[1]) || (p[0] === first[0] && p[1] === last[1]));
  t.ok(corner && corner !== first && corner !== last, `the path turns the corner where the body turned (${path})`);
  const robot = await page.locator('#body-view g.body-robot').getAttribute('transform');
  t.match(robot, /rotate\(-90\)$/, 'the arrow points along heading 90 (counter-clockwise: up on the page)');
  mkdirSync(OUT, { recursive: true });
  await page.locator('#body-panel').screenshot({ path: join(OUT, 'websim-body.png') });
});
