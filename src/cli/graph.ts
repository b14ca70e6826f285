// `cortexd graph NAME --format mermaid|dot|svg|json`: draws the mode statechart of a configuration.
import type { Command } from 'commander';
import { Option } from 'commander';
import { writeFileSync } from 'node:fs';
import type { AgentConfig } from '../config/schema.js';
import { EXIT, reportError, warnLine } from './output.js';

export const GRAPH_FORMATS = ['mermaid', 'dot', 'svg', 'json'] as const;
export type GraphFormat = (typeof GRAPH_FORMATS)[number];

/** The drawing of `config` in `format`; svg uses Graphviz when installed, else elkjs (no browser, no network). */
export async function renderGraph(config: AgentConfig, format: GraphFormat, signal?: AbortSignal): Promise<string> {
  if (format === 'svg') {
    const { renderSvg } = await import('../modes/svg.js');
    return (await renderSvg(config, { signal })).svg;
  }
  const { toDot, toMermaid, toStatelyJson } = await import('../modes/graph.js');
  switch (format) {
    case 'mermaid':
      return toMermaid(config);
    case 'dot':
      return toDot(config);
    case 'json':
      return `${JSON.stringify(toStatelyJson(config), null, 2)}\n`;
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
    .action(async (name: string | undefined, opts: { config?: string; format: GraphFormat; output?: string }) => {
      try {
        // Plugin types do not change the statechart, so a configuration naming unknown plugins still draws.
        const { loadConfig } = await import('../config/load.js');
        const loaded = await loadConfig(opts.config ? { file: opts.config } : { name }, { plugins: false });
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
