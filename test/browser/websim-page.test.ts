// WebSim in Debian's Chromium against the real default agent (`cortexd run`): highlight, typed text to answer and action, manual switch, token, refused bind.
import { requireBuild, requireFile } from '../helpers/requires.js';
import t from 'tap';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import JSON5 from 'json5';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startAgent, workDir, type AgentProcess } from '../helpers/agent-process.js';
import type { AgentEvent } from '../../src/cortex/events.js';

const ROOT = join(import.meta.dirname, '..', '..');
// The callbacks of page.waitForFunction run in Chromium, where this exists (the test tsconfig has no DOM library).
// biome-ignore lint/suspicious/noExplicitAny: the page's document, typed by the browser
declare const document: any;
const CHROMIUM = '/usr/bin/chromium';
const pageBuilt = existsSync(join(ROOT, 'dist', 'websim', 'app.js'));
requireBuild({ page: true });
requireFile(CHROMIUM, 'Debian package chromium: bash scripts/setup.sh --tests');
const OUT = join(ROOT, 'test-output');

/** A free loopback port (the agent's WebSim needs a fixed one; the config names it). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** config/default.json5 with WebSim listed in every mode (one server for the agent), written to a temp file. */
function defaultWithWebSim(dir: string, websim: Record<string, unknown>): string {
  // The copy lives in a temporary directory: its ${CONFIG_DIR} must still name the shipped media.
  const text = readFileSync(join(ROOT, 'config', 'default.json5'), 'utf8').replaceAll('${CONFIG_DIR}', join(ROOT, 'config'));
  const config = JSON5.parse(text) as { modes: Record<string, { simulators?: unknown[] }> };
  for (const mode of Object.values(config.modes)) mode.simulators = [{ type: 'WebSim', config: websim }];
  const file = join(dir, 'default.json5');
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

let browser: Browser | undefined;
async function openBrowser(): Promise<Browser> {
  browser ??= await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  return browser;
}
t.teardown(() => browser?.close());

/** Loads the page, retrying while the agent's WebSim is not listening yet. */
async function openPage(url: string, agent: AgentProcess): Promise<Page> {
  const page = await (await openBrowser()).newPage({ viewport: { width: 1400, height: 1000 } });
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      await page.goto(url);
      return page;
    } catch (err) {
      if (Date.now() > deadline || agent.exitedAt() !== undefined)
        throw new Error(`WebSim page did not load: ${(err as Error).message}; agent stderr: ${agent.stderr().slice(-2000)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

t.test('the default agent with WebSim: current mode highlighted, typed text to answer and action, manual switch', async (t) => {
  const w = workDir();
  const port = await freePort();
  const agent = startAgent(defaultWithWebSim(w.dir, { port }), w.state, ['--for', '120s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'agent.started', 20_000, 'agent.started');
  const ready = await agent.waitFor<Extract<AgentEvent, { type: 'simulator.ready' }>>((e) => e.type === 'simulator.ready', 20_000, 'WebSim listening');
  t.notOk('token' in ready, 'the bus carries where the token is, never the token');
  const token = readFileSync(ready.token_file!, 'utf8').trim();
  // The address the terminal prints: the generated token in the fragment, which never reaches the server.
  const page = await openPage(`http://127.0.0.1:${port}/#token=${token}`, agent);
  await page.locator('#access[data-state="unlocked"]').waitFor({ timeout: 10_000 });
  t.equal(new URL(page.url()).hash, '', 'the token left the address bar');
  t.ok(await page.locator('#unlock-form').isHidden(), 'an unlocked page hides the Unlock form');

  // A fresh page shows the current mode from the snapshot, highlighted in the Graphviz drawing.
  await page.locator('#status[data-state="open"]').waitFor({ timeout: 10_000 });
  await page.locator('#graph g.node.current[data-mode="idle"]').waitFor({ timeout: 10_000 });
  t.equal(await page.locator('#graph g.node.current').count(), 1, 'exactly one mode is highlighted');
  t.equal(await page.locator('#current-mode').textContent(), 'Idle');
  t.equal(await page.locator('#switch-buttons button[data-mode="idle"]').isDisabled(), true, 'the current mode cannot be switched to');
  await page.locator('#face svg[data-emotion="neutral"]').waitFor({ timeout: 10_000 }); // idle's on_entry action hook

  // Typed text reaches the agent: the keyword switches to conversation, marking the rule edge.
  await page.locator('#talk-text').fill('hello');
  await page.locator('#talk-send').click();
  const changed = await agent.waitFor<Ev<'mode.changed'>>((e) => e.type === 'mode.changed' && e.to === 'conversation', 15_000, 'switch to conversation');
  t.match(changed, { from: 'idle', trigger: 'input_triggered', rule_index: 0 });
  await page.locator('#graph g.node.current[data-mode="conversation"]').waitFor({ timeout: 10_000 });
  await page.locator('#graph g.node.previous[data-mode="idle"]').waitFor({ timeout: 5000 });
  await page.locator('#graph g.edge.last[data-rule="0"]').waitFor({ timeout: 5000 });
  t.match(await page.locator('#transition').textContent(), /Idle → Conversation by rule #0 \(input_triggered\)/);

  // A question gets a model answer and a spoken action, both on the page.
  await agent.waitFor((e) => e.type === 'tick' && e.mode === 'conversation', 15_000, 'tick in conversation');
  await page.locator('#talk-text').fill('what is your name');
  await page.locator('#talk-send').click();
  const answer = await agent.waitFor<Ev<'model.answer'>>((e) => e.type === 'model.answer', 20_000, 'model answer');
  const sentence = (answer.tool_calls.find((c) => c.name === 'speak')?.arguments as { sentence?: string } | undefined)?.sentence;
  t.ok(sentence, 'the model asked to speak');
  await page.locator('#answer .call', { hasText: `speak(` }).first().waitFor({ timeout: 10_000 });
  t.match(await page.locator('#answer').textContent(), sentence!);
  t.match(await page.locator('#latency').textContent(), /^\d+ ms/);
  await page.locator('#actions li[data-label="speak"][data-state="done"]', { hasText: sentence! }).first().waitFor({ timeout: 10_000 });
  t.match(await page.locator('#inputs').textContent(), /what is your name/);
  t.match(await page.locator('#prompt').textContent(), /what is your name/);
  t.notMatch(await page.locator('#counters').textContent(), /model calls0/, 'the model call is counted');

  // A manual switch the configuration does not allow (its only manual rule leads to idle) is refused, with the reason shown.
  await page.locator('#switch-buttons button[data-mode="sleep"]').click();
  await page.locator('#switch-note.bad', { hasText: /Switch to Sleep refused: .+/ }).waitFor({ timeout: 10_000 });
  // Every event re-renders the page; the note keeps the reply's words once the page has drawn a later tick.
  const drawn = Number(/ticks(\d+)/.exec((await page.locator('#counters').textContent()) ?? '')?.[1]);
  await page.waitForFunction((n) => Number(/ticks(\d+)/.exec(document.querySelector('#counters')?.textContent ?? '')?.[1]) > n, drawn, {
    timeout: 15_000,
  });
  t.match(await page.locator('#switch-note.bad').textContent(), /^Switch to Sleep refused: .+/, 'a later render keeps the refusal note as the reply wrote it');
  t.ok(await page.locator('#graph g.node.current[data-mode="conversation"]').isVisible(), 'still in conversation');

  // An allowed manual switch from the page changes the runtime's mode and the highlight.
  await page.locator('#switch-buttons button[data-mode="idle"]').click();
  const manual = await agent.waitFor<Ev<'mode.changed'>>(
    (e) => e.type === 'mode.changed' && e.from === 'conversation' && e.to === 'idle',
    15_000,
    'manual switch to idle',
  );
  t.match(manual, { reason: /WebSim/, rule_index: 5 });
  await page.locator('#graph g.node.current[data-mode="idle"]').waitFor({ timeout: 10_000 });
  await page.locator('#switch-note', { hasText: 'Switched to Idle.' }).waitFor({ timeout: 5000 });

  // The face panel follows the face action: sleep's on_entry hook shows "sad".
  await page.locator('#talk-text').fill('good night');
  await page.locator('#talk-send').click();
  await page.locator('#graph g.node.current[data-mode="sleep"]').waitFor({ timeout: 15_000 });
  await page.locator('#face svg[data-emotion="sad"]').waitFor({ timeout: 10_000 });
  await page.locator('#actions li[data-label="emotion"][data-state="done"]', { hasText: 'sad' }).first().waitFor({ timeout: 10_000 });

  mkdirSync(OUT, { recursive: true });
  await page.screenshot({ path: join(OUT, 'websim.png'), fullPage: true });

  // A page opened now starts from the snapshot: same mode, same last transition.
  const fresh = await openPage(`http://127.0.0.1:${port}/`, agent);
  await fresh.locator('#graph g.node.current[data-mode="sleep"]').waitFor({ timeout: 10_000 });
  t.match(await fresh.locator('#transition').textContent(), /Idle → Sleep by rule #1/);
  await fresh.close();
  await page.close();
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});

t.test('a token-protected WebSim: refused without the token, live after opening it with ?token=', async (t) => {
  const token = 'browser-test-token-0123456789';
  const w = workDir();
  const port = await freePort();
  const agent = startAgent(defaultWithWebSim(w.dir, { port, token }), w.state, ['--for', '120s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'agent.started', 20_000, 'agent.started');
  const page = await openPage(`http://127.0.0.1:${port}/`, agent);
  t.equal(
    await page
      .locator('body')
      .textContent()
      .then((x) => /token is required/.test(x ?? '')),
    true,
    'without the token: 401 body',
  );
  const response = await page.goto(`http://127.0.0.1:${port}/?token=${token}`);
  t.equal(new URL(page.url()).search, '', 'the token left the address bar');
  t.equal(response?.status(), 200);
  await page.locator('#status[data-state="open"]').waitFor({ timeout: 10_000 });
  await page.locator('#graph g.node.current[data-mode="idle"]').waitFor({ timeout: 10_000 });
  t.notMatch(await page.content(), token, 'the token is nowhere in the document');
  await page.close();
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});

t.test('WebSim bound to 0.0.0.0 without a token is refused: the agent reports it and nothing listens', async (t) => {
  const w = workDir();
  const port = await freePort();
  const env = process.env.CORTEX_WEBSIM_TOKEN;
  delete process.env.CORTEX_WEBSIM_TOKEN;
  const agent = startAgent(defaultWithWebSim(w.dir, { host: '0.0.0.0', port }), w.state, ['--for', '60s']);
  if (env !== undefined) process.env.CORTEX_WEBSIM_TOKEN = env;
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const refused = await agent.waitFor<Ev<'error'>>((e) => e.type === 'error' && e.source === 'simulator.WebSim', 20_000, 'WebSim refusal');
  t.match(refused.message, /refuses to bind 0\.0\.0\.0.*token/);
  await agent.waitFor((e) => e.type === 'tick', 20_000, 'the agent runs on without its page');
  const page = await (await openBrowser()).newPage();
  await t.rejects(page.goto(`http://127.0.0.1:${port}/`), /ERR_CONNECTION_REFUSED/, 'nothing listens on the port');
  await page.close();
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});
