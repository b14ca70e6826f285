// `cortexd check NAME|--all|--config PATH` and `cortexd list-configs`: validate configurations before anything starts.
import { readdirSync } from 'node:fs';
import type { Command } from 'commander';
import { configSearchPath, findConfigFile } from '../src/paths.js';
import { EXIT, out, reportError, warnLine } from './output.js';

/** The configuration names in `dir`, or in every directory of the search path (your config/, then the shipped one), sorted. */
export function listConfigNames(dir?: string): string[] {
  const names = (d: string) => {
    try {
      return readdirSync(d)
        .filter((f) => f.endsWith('.json5'))
        .map((f) => f.slice(0, -'.json5'.length));
    } catch {
      return [];
    }
  };
  return [...new Set((dir ? [dir] : configSearchPath()).flatMap(names))].sort();
}

/** Checks one target; prints `ok: FILE (N modes)` or one line per problem; returns the exit code. */
export async function checkOne(target: { name?: string; file?: string }, as: { om1?: boolean; simulate?: boolean } = {}): Promise<number> {
  try {
    const { displayName } = await import('../src/config/load.js');
    const { loadAs } = await import('../src/compat/om1/load.js');
    const { loaded, om1, simulated } = await loadAs(target, as).catch((err: unknown) => {
      // OM1's translations are printed before what is missing, so a user sees both.
      const report = (err as { report?: { translations: string[] } }).report;
      for (const line of report?.translations ?? []) out(`om1: ${line}`);
      throw err;
    });
    for (const line of om1?.translations ?? []) out(`om1: ${line}`);
    for (const w of om1?.warnings ?? []) warnLine(w);
    for (const line of simulated ?? []) out(`simulate: ${line}`);
    for (const line of loaded.notes ?? []) out(line);
    for (const w of loaded.warnings) warnLine(w);
    const modes = Object.keys(loaded.config.modes).length;
    out(`ok: ${displayName(loaded.file)} (${modes} mode${modes === 1 ? '' : 's'}${loaded.legacy ? ', converted from single-mode' : ''})`);
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  }
}

export function register(program: Command): void {
  program
    .command('check')
    .description('validate a configuration (or all of config/) without starting anything; exit 2 on problems')
    .argument('[name]', 'configuration name: <name>.json5 in ./config (or CORTEX_CONFIG_DIR), else the shipped config/; or a file path (default: $CONFIG)')
    .option('--all', 'check every configuration in ./config (or CORTEX_CONFIG_DIR) and the shipped config/')
    .option('--config <path>', 'check a file by path')
    .option('--om1 [file]', 'read the file as OM1 writes it (its plugin names translated, each translation printed)')
    .option('--simulate', 'check it as `cortexd run --simulate` runs it: simulated devices, the embedded service')
    .action(async (name: string | undefined, opts: { all?: boolean; config?: string; om1?: string | boolean; simulate?: boolean }) => {
      // Each schema parses a handful of values here, so zod's compiled fast path (new Function per
      // object schema) costs more than it saves: about 7 ms of check's start. Same results.
      (await import('zod')).config({ jitless: true });
      const as = { om1: opts.om1 !== undefined, simulate: opts.simulate === true };
      if (typeof opts.om1 === 'string') opts.config = opts.om1;
      let code: number = EXIT.ok;
      if (opts.all) {
        const names = listConfigNames();
        if (names.length === 0) {
          out(`no .json5 configurations found in ${configSearchPath().join(', ')}`);
          code = EXIT.invalid;
        }
        for (const n of names) code = Math.max(code, await checkOne({ file: findConfigFile(n)! }, as));
      } else if (opts.config) {
        code = await checkOne({ file: opts.config }, as);
      } else {
        code = await checkOne({ name }, as);
      }
      process.exitCode = code;
    });

  program
    .command('list-configs')
    .description('list the configurations in config/')
    .action(() => {
      for (const n of listConfigNames()) out(n);
    });
}
