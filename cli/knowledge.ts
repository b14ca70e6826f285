// `cortexd knowledge index | query TEXT|- [--json]`: builds a configuration's knowledge base index and shows the passages a turn would get.
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { CortexError } from '../src/errors.js';
import { EXIT, out, reportError, warnLine } from './output.js';

export interface ConfigOptions {
  config?: string;
  name?: string;
  om1?: boolean;
}

/** Adds the options that pick a configuration (`--config FILE`, `--name NAME`, `--om1`), as `check` takes them. */
export function configOptions(cmd: Command): Command {
  return cmd
    .option('--config <path>', 'the configuration file (default: config/$CONFIG.json5)')
    .option('--name <name>', 'a configuration by name: config/<name>.json5')
    .option('--om1', 'read the file as OM1 writes it');
}

/** Loads the configuration a command names (no plugin code: only its blocks are read). */
export async function loadFor(opts: ConfigOptions) {
  (await import('zod')).config({ jitless: true });
  const { loadAs } = await import('../src/compat/om1/load.js');
  const { loaded, om1 } = await loadAs(
    { ...(opts.config ? { file: opts.config } : {}), ...(opts.name ? { name: opts.name } : {}) },
    { om1: opts.om1 === true, plugins: false },
  );
  for (const w of loaded.warnings) warnLine(w);
  void om1;
  return loaded;
}

async function openIndex(opts: ConfigOptions) {
  const loaded = await loadFor(opts);
  const { knowledgeSettings } = await import('../src/config/memory.js');
  const settings = knowledgeSettings(loaded.config.knowledge_base, loaded.file);
  if (!settings) throw new CortexError('no_knowledge_base', `${loaded.file} has no knowledge_base block with a knowledge_base_root`);
  const { KnowledgeIndex } = await import('../src/memory/knowledge.js');
  const { stateDir } = await import('../src/paths.js');
  const index = new KnowledgeIndex(settings, stateDir());
  if (index.recovered) warnLine(`knowledge base: ${index.recovered}`);
  const report = index.sync();
  for (const s of report.skipped) warnLine(`${s.source} skipped: ${s.why}`);
  return { index, report, settings };
}

/** Reads queries one per line from standard input (empty lines skipped). */
async function* stdinLines(): AsyncGenerator<string> {
  const rl = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of rl) if (line.trim()) yield line.trim();
}

export function register(program: Command): void {
  const kb = program.command('knowledge').description("a configuration's knowledge base: the folder of documents the robot answers from");

  configOptions(kb.command('index').description('index the documents (changed files only) and say what was indexed, removed and skipped')).action(
    async (opts: ConfigOptions) => {
      try {
        const { index, report, settings } = await openIndex(opts);
        for (const f of report.indexed) out(`indexed: ${f}`);
        for (const f of report.removed) out(`removed: ${f}`);
        out(
          `ok: "${settings.name}" ${settings.root}: ${report.files} document${report.files === 1 ? '' : 's'}, ${report.chunks} passages, ${report.skipped.length} skipped (${Math.round(report.ms)} ms); index ${index.file}`,
        );
        index.close();
        process.exitCode = EXIT.ok;
      } catch (err) {
        process.exitCode = reportError(err);
      }
    },
  );

  configOptions(
    kb
      .command('query')
      .description('the passages (source, score, text) a turn that heard TEXT would get; `-` reads one query per line from standard input')
      .argument('<text...>', 'what was heard, or - for standard input')
      .option('--json', 'one JSON object per query: {"query", "passages": [{"source", "text", "score"}]}')
      .option('--top-k <n>', 'passages at most (default: the block top_k)', (v) => Number.parseInt(v, 10))
      .option('--min-score <x>', 'least score, 0..1 (default: the block min_score)', Number.parseFloat),
  ).action(async (words: string[], opts: ConfigOptions & { json?: boolean; topK?: number; minScore?: number }) => {
    try {
      if (opts.topK !== undefined && !(opts.topK >= 1)) throw new (await import('./output.js')).UsageError('--top-k must be a whole number of at least 1');
      if (opts.minScore !== undefined && !(opts.minScore >= 0 && opts.minScore <= 1))
        throw new (await import('./output.js')).UsageError('--min-score must be between 0 and 1');
      const { index } = await openIndex(opts);
      const queries: AsyncIterable<string> | string[] = words.length === 1 && words[0] === '-' ? stdinLines() : [words.join(' ')];
      for await (const query of queries) {
        const passages = index.query(query, { ...(opts.topK ? { topK: opts.topK } : {}), ...(opts.minScore !== undefined ? { minScore: opts.minScore } : {}) });
        if (opts.json) {
          out(JSON.stringify({ query, passages: passages.map((p) => ({ source: p.source, text: p.text, score: p.score })) }));
          continue;
        }
        out(`${query}`);
        if (passages.length === 0) out('  (no passage fits)');
        for (const p of passages) {
          out(`  ${p.score.toFixed(3)}  ${p.source}${p.heading ? ` (${p.heading})` : ''}`);
          out(`         ${p.text.replace(/\s+/g, ' ').slice(0, 200)}`);
        }
      }
      index.close();
      process.exitCode = EXIT.ok;
    } catch (err) {
      process.exitCode = reportError(err);
    }
  });
}
