#!/usr/bin/env node
// The `cortexd` entry: answers a bare `--version` from package.json alone, runs `check` from its one-file build, else loads the command program and runs it.
import { packageVersion } from './version.js';

/*
 * `cortexd --version` (or `-V`) alone is answered here, before commander and the eleven command
 * modules are loaded, so it answers within 40 ms of a bare node start. Everything else,
 * `--version` among other arguments included, goes through the program as before. `check` and
 * `run` run the same program from the bundles scripts/bundle-cli.mjs makes at build time
 * (cli/bundle.ts), or from the ES modules when there is none or it is stale.
 */
const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) process.stdout.write(`${packageVersion()}\n`);
else (((argv[0] === 'check' || argv[0] === 'run') && (await import('./bundle.js')).loadCliBundle(argv[0])) || (await import('./program.js'))).run(argv);
