// The `cortexd` command program: parses arguments and hands each subcommand to its module; no stack traces for users.
import { Command } from 'commander';
import { register as registerCheck } from './check.js';
import { register as registerModes } from './modes.js';
import { register as registerSchema } from './schema.js';
import { register as registerKeys } from './keys.js';
import { register as registerBalance } from './balance.js';
import { register as registerDoctor } from './doctor.js';
import { register as registerGraph } from './graph.js';
import { register as registerCloud } from './cloud.js';
import { register as registerRun } from './run.js';
import { register as registerEstop } from './estop.js';
import { register as registerFleet } from './fleet.js';
import { register as registerReplay } from './replay.js';
import { register as registerOm1 } from './om1.js';
import { register as registerInit } from './init.js';
import { register as registerKnowledge } from './knowledge.js';
import { register as registerMemory } from './memory.js';
import { EXIT, reportError } from './output.js';
import { packageVersion } from './version.js';

/*
 * The command modules above only declare their arguments and options: each command's action imports
 * what it uses when it runs (`cortexd run` loads the agent, `cortexd cloud` the service), so
 * `--version`, `check`, `schema`, `modes` and `graph` never load the server stack or plugin code.
 */

export function buildProgram(): Command {
  const program = new Command('cortexd')
    .description('an agent runtime for robots: modes, inputs, a language model and actions')
    .version(packageVersion())
    .showHelpAfterError()
    .exitOverride();
  for (const register of [
    registerCheck,
    registerModes,
    registerSchema,
    registerKeys,
    registerBalance,
    registerDoctor,
    registerGraph,
    registerCloud,
    registerRun,
    registerEstop,
    registerFleet,
    registerReplay,
    registerOm1,
    registerInit,
    registerKnowledge,
    registerMemory,
  ])
    register(program);
  return program;
}

export async function main(argv: string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : EXIT.ok;
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'commander.helpDisplayed' || code === 'commander.version' || code === 'commander.help') return EXIT.ok;
    if (typeof code === 'string' && code.startsWith('commander.')) return EXIT.invalid;
    return reportError(err);
  }
}

/** Runs the command line (arguments after `cortexd`): sets the exit code, prints errors without stack traces. */
export function run(argv: string[]): void {
  // Output piped into a reader that stops early (`cortexd schema | head`) ends the command quietly, as other tools do.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'EPIPE') process.exit(process.exitCode ?? EXIT.ok);
      throw err;
    });
  }
  main(argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.exitCode = reportError(err);
    },
  );
}
