// Proves `cortexd graph` draws every shipped config and every parsable reference config in mermaid, dot, svg and json.
import t from 'tap';
import { readdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { createMachine } from 'xstate';
import { getAdjacencyMap } from '@xstate/graph';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { configDir } from '../../src/paths.js';
import { renderGraph, GRAPH_FORMATS } from '../../cli/graph.js';
import { drawnEdges, modeEdges } from '../../src/modes/graph.js';
import { MAX_WIDTH_PX } from '../../src/modes/svg.js';
import { renderSvg } from '../../src/modes/svg.js';

const corpusDir = join(process.cwd(), '..', 'shared', 'reference', 'om1-configs');
const files = [
  ...(existsSync(corpusDir)
    ? readdirSync(corpusDir)
        .filter((f) => f.endsWith('.json5'))
        .map((f) => join(corpusDir, f))
    : []),
  ...readdirSync(configDir())
    .filter((f) => f.endsWith('.json5'))
    .map((f) => join(configDir(), f)),
];

t.ok(files.length >= 30, `found ${files.length} configurations to draw`);
let drawn = 0;
for (const file of files) {
  t.test(file, async (t) => {
    let loaded: Awaited<ReturnType<typeof loadConfig>>;
    try {
      loaded = await loadConfig({ file }, { plugins: false, env: { OM_API_KEY: 'k' } });
    } catch (err) {
      if (err instanceof ConfigError) {
        t.comment(`does not parse, skipped: ${err.issues[0]?.message}`);
        return;
      }
      throw err;
    }
    drawn++;
    const cfg = loaded.config;
    const names = Object.keys(cfg.modes);
    const edges = modeEdges(cfg);
    const shown = drawnEdges(cfg);
    for (const format of GRAPH_FORMATS) {
      const text = await renderGraph(cfg, format);
      t.ok(text.length > 0, `${format} is not empty`);
      if (format === 'mermaid') {
        t.match(text, /^stateDiagram-v2\n/);
        t.equal(
          text.split('\n').filter((l) => l.includes(' --> ') && !l.includes('[*]')).length,
          shown.length,
          'one mermaid arrow per drawn edge ("*" rules once)',
        );
      }
      if (format === 'dot') t.equal((text.match(/ -> /g) ?? []).length, shown.length + 1, 'one dot edge per drawn edge plus the start');
      if (format === 'svg') {
        t.match(text, /<svg[\s>]/);
        for (const n of names) t.ok(text.includes(n), `svg names mode ${n}`);
        const width = Number(/<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg" width="(\d+)"/.exec(text)?.[1]);
        t.ok(width > 0 && width <= MAX_WIDTH_PX, `the drawing is ${width} px wide, at most ${MAX_WIDTH_PX}`);
      }
      if (format === 'json') {
        const machine = createMachine(JSON.parse(text));
        const events = [...new Set(edges.map((e) => `rule.${e.ruleIndex}`))].map((type) => ({ type }));
        const adjacency = getAdjacencyMap(machine, { events });
        const reachable = Object.values(adjacency).map((v) => v.state.value as string);
        t.ok(reachable.includes(cfg.default_mode) && reachable.every((s) => names.includes(s)), '@xstate/graph traverses the JSON machine');
        t.equal(machine.root.initial?.target[0]?.key, cfg.default_mode);
      }
    }
  });
}

t.test('at least one multi-mode reference config was drawn', async (t) => {
  t.ok(drawn > 0);
});

t.test('without Graphviz the svg falls back to the elkjs layout', async (t) => {
  const loaded = await loadConfig({ file: join(corpusDir, 'spot_modes.json5') }, { plugins: false, env: { OM_API_KEY: 'k' } });
  const missing = await renderSvg(loaded.config, { dot: '/nonexistent/dot' });
  t.equal(missing.renderer, 'elkjs');
  t.match(missing.svg, /<svg[\s>]/);
  t.match(missing.svg, /welcome/);
  t.match(missing.svg, /conversation/);
  t.equal((missing.svg.match(/<polyline /g) ?? []).length, drawnEdges(loaded.config).length, 'one line per drawn edge');
  const real = await renderSvg(loaded.config);
  t.equal(real.renderer, 'graphviz', 'the installed dot is used when present');
  await t.rejects(renderSvg(loaded.config, { dot: '/bin/false' }), /exited with 1/, 'a failing dot is an error, not a silent fallback');
});
