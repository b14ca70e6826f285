// `cortexd om1 convert FILE [-o OUT]`: writes OM1's configuration in this runtime's format and prints every translation.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { EXIT, errLine, out, reportError } from './output.js';

/** Converts one file; prints `om1: PATH: OLD -> NEW` lines, then what is missing; returns the exit code. */
export async function convertCommand(file: string, opts: { output?: string; simulate?: boolean }): Promise<number> {
  try {
    const [{ parseConfigText }, { convertOm1 }, { readRegularFile }, { MAX_CONFIG_BYTES, displayName }, { om1Problems }] = await Promise.all([
      import('../config/parse-text.js'),
      import('../compat/om1/convert.js'),
      import('../config/read-file.js'),
      import('../config/load.js'),
      import('../compat/om1/load.js'),
    ]);
    const raw = parseConfigText(readRegularFile(file, MAX_CONFIG_BYTES), displayName(file));
    const converted = convertOm1(raw, { simulate: opts.simulate === true });
    for (const line of converted.translations) out(`om1: ${line}`);
    const text = `// Converted from OM1's ${displayName(file)} by \`cortexd om1 convert\`: check it with \`cortexd check --config FILE\`.\n${JSON.stringify(converted.config, null, 2)}\n`;
    if (opts.output) writeFileSync(opts.output, text);
    else out(text);
    if (converted.missing.length + converted.unsupported.length > 0) {
      if (opts.output) errLine(`cortexd: wrote ${opts.output}, but it does not run as it is:`);
      return reportError(om1Problems(displayName(file), converted));
    }
    if (opts.output) errLine(`cortexd: wrote ${opts.output} (${converted.translations.length} translation${converted.translations.length === 1 ? '' : 's'})`);
    return EXIT.ok;
  } catch (err) {
    return reportError(err);
  }
}

export function register(program: Command): void {
  const om1 = program.command('om1').description("OM1's configuration files (the Python runtime with the same format)");
  om1
    .command('convert')
    .description('write the native configuration of an OM1 file and print every translation; exit 2 when parts are missing')
    .argument('<file>', 'the OM1 configuration (.json5)')
    .option('-o, --output <file>', 'write the native configuration here (default: stdout)')
    .option('--simulate', 'translate as `run --om1 --simulate` does (devices this runtime cannot open become simulated ones)')
    .action(async (file: string, opts: { output?: string; simulate?: boolean }) => {
      process.exitCode = await convertCommand(file, opts);
    });
}
