// `cortexd graph NAME --format mermaid|dot|svg|json`: draws the mode statechart of a configuration (or, with --safety, the safety governor's).
import type { Command } from 'commander';
import { Option } from 'commander';
import { writeFileSync } from 'node:fs';
import type { AgentConfig } from '../src/config/schema.js';
import { CortexError } from '../src/errors.js';
import { EXIT, reportError, warnLine } from './output.js';

export const GRAPH_FORMATS = ['mermaid', 'dot', 'svg', 'json'] as const;
export type GraphFormat = (typeof GRAPH_FORMATS)[number];

/** The drawing of `config` in `format`; svg uses Graphviz when installed, else elkjs (no browser, no network). */
export async function renderGraph(config: AgentConfig, format: GraphFormat, signal?: AbortSignal): Promise<string> {
  if (format === 'svg') {
    const { renderSvg } = await import('../src/modes/svg.js');
    return (await renderSvg(config, { signal })).svg;
  }
  const { toDot, toMermaid, toStatelyJson } = await import('../src/modes/graph.js');
  switch (format) {
    case 'mermaid':
      return toMermaid(config);
    case 'dot':
      return toDot(config);
    case 'json':
      return `${JSON.stringify(toStatelyJson(config), null, 2)}\n`;
  }
}

/** The safety governor's statechart in `format` (it does not depend on a configuration; its limits do). */
export async function renderSafetyGraph(format: GraphFormat, signal?: AbortSignal): Promise<string> {
  const [{ governorLogic }, chart] = await Promise.all([import('../actors/safety/governor.js'), import('../src/safety/graph.js')]);
  const root = chart.definitionOf(governorLogic().root as unknown as import('../src/safety/graph.js').StateNodeLike);
  switch (format) {
    case 'mermaid':
      return chart.chartMermaid(root);
    case 'dot':
      return chart.chartDot(root);
    case 'json':
      return `${JSON.stringify(chart.chartJson(root), null, 2)}\n`;
    case 'svg': {
      const { runDot } = await import('../src/modes/svg.js');
      try {
        return await runDot(process.env.CORTEX_DOT ?? 'dot', chart.chartDot(root), signal);
      } catch (err) {
        if (err instanceof Error && err.name === 'GraphRenderError') throw err;
        throw new CortexError('graph_render_failed', 'drawing the safety statechart as SVG needs Graphviz (dot); use --format mermaid, dot or json');
      }
    }
  }
}

export function register(program: Command): void {
  program
    .command('graph')
    .description('draw the mode statechart of a configuration: modes, rules (type, keywords, priority, cooldown) and timeouts')
    .argument('[name]', 'configuration name: config/<name>.json5 (default: $CONFIG)')
    .option('--config <path>', 'a configuration file by path')
    .addOption(new Option('--format <format>', 'output format').choices([...GRAPH_FORMATS]).default('mermaid'))
    .option('-o, --output <file>', 'write to a file instead of stdout')
    .option('--safety', "draw the safety governor's statechart (e-stop latch, motion and dead-man, model health, stopping) instead")
    .action(async (name: string | undefined, opts: { config?: string; format: GraphFormat; output?: string; safety?: boolean }) => {
      try {
        if (opts.safety) {
          const text = await renderSafetyGraph(opts.format);
          if (opts.output) writeFileSync(opts.output, text);
          else process.stdout.write(text);
          process.exitCode = EXIT.ok;
          return;
        }
        // Plugin types do not change the statechart, so a configuration naming unknown plugins still draws.
        const { loadConfig } = await import('../src/config/load.js');
        const loaded = await loadConfig(opts.config ? { file: opts.config } : { name }, { plugins: false, unknownFields: 'warn' });
        for (const w of loaded.warnings) warnLine(w);
        const text = await renderGraph(loaded.config, opts.format);
        if (opts.output) writeFileSync(opts.output, text);
        else process.stdout.write(text);
        process.exitCode = EXIT.ok;
      } catch (err) {
        process.exitCode = reportError(err);
      }
    });
}
