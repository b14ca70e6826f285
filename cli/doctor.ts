// `cortexd doctor [NAME]`: checks the machine, the configuration and the hardware the service needs, one line per check.
import type { Command } from 'commander';
import { out } from './output.js';

export function register(program: Command): void {
  program
    .command('doctor')
    .description('check that this machine can run a configuration as a service: ok / warn / FAIL with the fix; exit 1 when a check fails')
    .argument('[name]', 'configuration the service runs (cortexd@NAME); default $CONFIG')
    .option('--config <path>', 'check a configuration file by path')
    .option('--env-file <path>', 'service environment file to read (default /etc/cortexd/env)')
    .option('--timeout <ms>', 'TCP connect timeout per address', '2000')
    .option('--json', 'print the results as JSON')
    .option(
      '--native',
      'only load the native modules (better-sqlite3, unix-dgram, the serial binding, OpenCV and the DDS addon when compiled) and check the notify path',
    )
    .action(async (name: string | undefined, opts: { config?: string; envFile?: string; timeout: string; json?: boolean; native?: boolean }) => {
      const { formatResult, formatSummary, runDoctor, runNativeDoctor } = await import('../src/doctor/run.js');
      const configName = name ?? process.env.CONFIG;
      const target = opts.config ? { file: opts.config } : configName ? { name: configName } : undefined;
      const report = opts.native
        ? await runNativeDoctor()
        : await runDoctor({
            ...(target ? { target } : {}),
            ...(opts.envFile ? { envFile: opts.envFile } : {}),
            reachTimeoutMs: Math.max(100, Number(opts.timeout) || 2000),
          });
      if (opts.json) out(JSON.stringify(report.results, null, 2));
      else {
        for (const r of report.results) out(formatResult(r));
        out(formatSummary(report.results));
      }
      process.exitCode = report.exitCode;
    });
}
