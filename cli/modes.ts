// `cortexd modes NAME`: the modes, default mode, rules and hooks of a configuration as tables (or JSON).
import type { Command } from 'commander';
import { EXIT, out, reportError, warnLine } from './output.js';

export function register(program: Command): void {
  program
    .command('modes')
    .description('show the modes, default mode, transition rules and hooks of a configuration (converted form)')
    .argument('[name]', 'configuration name: config/<name>.json5 (default: $CONFIG)')
    .option('--config <path>', 'a configuration file by path')
    .option('--json', 'print the converted configuration as JSON (secrets redacted)')
    .action(async (name: string | undefined, opts: { config?: string; json?: boolean }) => {
      try {
        const [{ loadConfig }, { renderModes }, { redactDeep }] = await Promise.all([
          import('../src/config/load.js'),
          import('./modes-table.js'),
          import('../src/redact.js'),
        ]);
        const loaded = await loadConfig(opts.config ? { file: opts.config } : { name }, { unknownFields: 'warn' });
        for (const w of loaded.warnings) warnLine(w);
        out(opts.json ? JSON.stringify(redactDeep(loaded.config), null, 2) : renderModes(loaded));
        process.exitCode = EXIT.ok;
      } catch (err) {
        process.exitCode = reportError(err);
      }
    });
}
