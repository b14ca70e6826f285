// `cortexd check NAME|--all|--config PATH` and `cortexd list-configs`: validate configurations before anything starts.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { configDir } from '../paths.js';
import { EXIT, out, reportError, warnLine } from './output.js';

/** The configuration names in config/, sorted. */
export function listConfigNames(dir = configDir()): string[] {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith('.json5'))
      .map((f) => f.slice(0, -'.json5'.length))
      .sort();
  } catch {
    return [];
  }
}

/** Checks one target; prints `ok: FILE (N modes)` or one line per problem; returns the exit code. */
export async function checkOne(target: { name?: string; file?: string }): Promise<number> {
  try {
    const { displayName, loadConfig } = await import('../config/load.js');
    const loaded = await loadConfig(target);
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
    .argument('[name]', 'configuration name: config/<name>.json5 (default: $CONFIG)')
    .option('--all', 'check every configuration in config/')
    .option('--config <path>', 'check a file by path')
    .action(async (name: string | undefined, opts: { all?: boolean; config?: string }) => {
      let code: number = EXIT.ok;
      if (opts.all) {
        const names = listConfigNames();
        if (names.length === 0) {
          out(`${configDir()}: no .json5 configurations found`);
          code = EXIT.invalid;
        }
        for (const n of names) code = Math.max(code, await checkOne({ file: join(configDir(), `${n}.json5`) }));
      } else if (opts.config) {
        code = await checkOne({ file: opts.config });
      } else {
        code = await checkOne({ name });
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
