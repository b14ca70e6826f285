// `cortexd om1 convert FILE [-o OUT]`: writes OM1's configuration in this runtime's format and prints every translation.
import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { EXIT, errLine, out, reportError, warnLine } from './output.js';

/** Converts one file; prints `om1: PATH: OLD -> NEW` lines, then what is missing; returns the exit code. */
export async function convertCommand(file: string, opts: { output?: string; simulate?: boolean }): Promise<number> {
  try {
    const [
      { convertOm1 },
      { readOm1Text },
      { readRegularFile },
      { MAX_CONFIG_BYTES, displayName },
      { om1Problems },
      { configEnvironment },
      { basename, extname },
    ] = await Promise.all([
      import('../src/compat/om1/convert.js'),
      import('../src/compat/om1/read.js'),
      import('../src/config/read-file.js'),
      import('../src/config/load.js'),
      import('../src/compat/om1/load.js'),
      import('../src/config/env.js'),
      import('node:path'),
    ]);
    const read = readOm1Text(readRegularFile(file, MAX_CONFIG_BYTES), configEnvironment());
    const converted = convertOm1(read.raw, { simulate: opts.simulate === true, fileName: basename(file, extname(file)) });
    for (const line of [...read.notes, ...converted.translations]) out(`om1: ${line}`);
    for (const w of converted.warnings) warnLine(w);
    let config = converted.config;
    // use_sim (or --simulate): the devices are written as the simulated bindings `--simulate` would choose.
    if (converted.simulate) {
      const { simulateConfig } = await import('../src/config/simulate.js');
      const sim = simulateConfig(config);
      config = sim.config;
      for (const line of sim.lines) out(`simulate: ${line}`);
    }
    const notes = [
      `// Converted from OM1's ${displayName(file)} by \`cortexd om1 convert\`: check it with \`cortexd check --config FILE\`.`,
      ...(converted.tracer ? ["// OM1's use_tracer was on: run it with `cortexd run --config FILE --record traces.mcap` to record it the same way."] : []),
    ];
    const text = `${notes.join('\n')}\n${JSON.stringify(config, null, 2)}\n`;
    if (opts.output) writeFileSync(opts.output, text);
    else out(text);
    if (converted.missing.length + converted.unsupported.length + converted.refused.length > 0) {
      if (opts.output) errLine(`cortexd: wrote ${opts.output}, but it does not run as it is:`);
      return reportError(om1Problems(displayName(file), converted));
    }
    if (opts.output) errLine(`cortexd: wrote ${opts.output} (${converted.translations.length} translation${converted.translations.length === 1 ? '' : 's'})`);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof SyntaxError) {
      errLine(`cortexd: ${file}: ${err.message.replace(/^JSON5: /, '')}`);
      return EXIT.invalid;
    }
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
