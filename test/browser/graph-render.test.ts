// `cortexd graph` as a person sees it in Chromium: the 6-mode, 23-rule corpus chart fits 1,600 px at a readable size; Mermaid output parses and renders with the real Mermaid library.
import { requireBuild, requireFile } from '../helpers/requires.js';
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { MAIN } from '../helpers/agent-process.js';
import { loadConfig } from '../../src/config/load.js';
import { renderGraph } from '../../cli/graph.js';

// The callbacks of page.evaluate run in Chromium, where these exist (the test tsconfig has no DOM library).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
declare const document: any, window: any;

const ROOT = join(import.meta.dirname, '..', '..');
const CHROMIUM = '/usr/bin/chromium';
const OUT = join(ROOT, 'test-output');
const CORPUS = join(ROOT, '..', 'shared', 'reference', 'om1-configs');
const SIX_MODES = join(CORPUS, 'unitree_go2_modes.json5');
const MERMAID_JS = (() => {
  try {
    return createRequire(import.meta.url).resolve('mermaid/dist/mermaid.min.js');
  } catch {
    return undefined;
  }
})();
requireBuild();
requireFile(CHROMIUM, 'apt-get install chromium; bash scripts/setup.sh --tests installs it');
requireFile(SIX_MODES, 'the reference corpus belongs at ../shared beside the checkout');
if (!MERMAID_JS) throw new Error('mermaid (a devDependency) is not installed: run npm ci');

const graph = (args: string[]) => execFileSync(process.execPath, [MAIN, 'graph', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });

let browser: Browser | undefined;
async function page(width: number): Promise<Page> {
  browser ??= await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  return browser.newPage({ viewport: { width, height: 1000 } });
}
t.teardown(() => browser?.close());

/** The drawing in a page of `width` px: its rendered size, and the smallest rendered text height among its labels. */
async function render(svg: string, width: number, shot: string) {
  const p = await page(width);
  await p.setContent(`<!doctype html><html><body style="margin:0">${svg.replace(/<\?xml[^>]*>/, '')}</body></html>`);
  const m = await p.evaluate(() => {
    const root = document.querySelector('body > svg')!;
    const box = root.getBoundingClientRect();
    const texts: Array<{ textContent: string | null; getBoundingClientRect(): { height: number; right: number } }> = Array.from(root.querySelectorAll('text'));
    texts.splice(0, texts.length, ...texts.filter((e) => (e.textContent ?? '').trim()));
    const heights = texts.map((e) => e.getBoundingClientRect().height);
    const outside = texts.filter((e) => e.getBoundingClientRect().right > box.right + 1).length;
    const labels = texts.map((e) => e.textContent ?? '');
    return { width: box.width, height: box.height, smallest: Math.min(...heights), outside, labels };
  });
  mkdirSync(OUT, { recursive: true });
  await p.screenshot({ path: join(OUT, shot), fullPage: true });
  await p.close();
  return m;
}

t.test('the 6-mode, 23-rule corpus chart fits 1,600 px wide, every label readable, "*" labelled once', async (t) => {
  for (const [name, env] of [
    ['graphviz', {}],
    ['elkjs', { CORTEX_DOT: '/nonexistent/dot' }],
  ] as const) {
    const svg = execFileSync(process.execPath, [MAIN, 'graph', '--config', SIX_MODES, '--format', 'svg'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      env: { ...process.env, ...env },
    });
    const m = await render(svg, 1600, `graph-six-modes-${name}.png`);
    t.ok(m.width <= 1600, `${name}: ${Math.round(m.width)} px wide`);
    t.ok(m.smallest >= 13, `${name}: the smallest label is ${m.smallest.toFixed(1)} px high`);
    t.equal(m.outside, 0, `${name}: no label sticks out of the drawing`);
    for (let rule = 0; rule < 23; rule++)
      t.ok(
        m.labels.some((l) => l.startsWith(`#${rule} `) || l === `#${rule}`),
        `${name}: rule #${rule} is on the chart`,
      );
    t.equal(m.labels.filter((l) => /^#22 /.test(l)).length, 1, `${name}: the "*" rule #22 is described once`);
  }
});

t.test('the default chart fits with its full rule labels', async (t) => {
  const m = await render(graph(['default', '--format', 'svg']), 1600, 'graph-default.png');
  t.ok(m.width <= 1600, `${Math.round(m.width)} px wide`);
  t.ok(
    m.labels.some((l) => l.startsWith('#0 input_triggered')),
    'rule labels are on the arrows',
  );
  t.ok(m.smallest >= 11);
});

t.test('Mermaid output parses and renders with the real Mermaid library, for every configuration that loads', async (t) => {
  const p = await page(1600);
  await p.setContent('<!doctype html><html><body><div id="out"></div></body></html>');
  await p.addScriptTag({ path: MERMAID_JS! });
  await p.evaluate(() => (window as unknown as { mermaid: { initialize(o: object): void } }).mermaid.initialize({ startOnLoad: false }));
  const files = [
    ...readdirSync(CORPUS)
      .filter((f) => f.endsWith('.json5'))
      .map((f) => join(CORPUS, f)),
    join(ROOT, 'config', 'default.json5'),
  ];
  let parsed = 0;
  for (const file of files) {
    // What `cortexd graph --format mermaid` prints, made in this process: 37 CLI starts cost half a minute of CI (the CLI itself draws the six-mode chart below).
    let text: string;
    try {
      const loaded = await loadConfig({ file }, { plugins: false, unknownFields: 'warn' });
      text = await renderGraph(loaded.config, 'mermaid');
    } catch {
      continue; // a file that does not load (its problem is tested elsewhere)
    }
    const result = await p.evaluate(async (src) => {
      try {
        await (window as unknown as { mermaid: { parse(s: string): Promise<unknown> } }).mermaid.parse(src);
        return 'ok';
      } catch (err) {
        return String((err as Error).message ?? err);
      }
    }, text);
    t.equal(result, 'ok', `${file.split('/').pop()} parses`);
    parsed++;
  }
  t.ok(parsed >= 30, `${parsed} configurations parsed`);
  const six = graph(['--config', SIX_MODES, '--format', 'mermaid']);
  const drawn = await p.evaluate(async (src) => {
    const { svg } = await (window as unknown as { mermaid: { render(id: string, s: string): Promise<{ svg: string }> } }).mermaid.render('six', src);
    document.getElementById('out')!.innerHTML = svg;
    return document.querySelectorAll('#out g.node, #out g.stateGroup, #out [id*="state-"]').length;
  }, six);
  t.ok(drawn >= 6, 'Mermaid drew the modes');
  await p.screenshot({ path: join(OUT, 'mermaid-six-modes.png'), fullPage: true });
  await p.close();
});
