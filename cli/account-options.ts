// What `cortexd keys` and `cortexd balance` share at registration: their options and the process's output; the client loads when they run.
import type { Command } from 'commander';
import type { CliIo } from '../src/cloud/account-cli.js';

/** Adds the options every account command shares. */
export function accountOptions(cmd: Command): Command {
  return cmd
    .option('--jwt <token>', 'identity-provider JWT (default: $CORTEX_JWT; prefer the variable, arguments show in ps)')
    .option('--base-url <url>', 'HTTP address of the service (default: $CORTEX_BASE_URL)')
    .option('--json', 'print JSON instead of a table');
}

export const processIo: CliIo = {
  out: (l) => void process.stdout.write(`${l}\n`),
  err: (l) => void process.stderr.write(`${l}\n`),
  env: process.env,
  setExitCode: (c) => void (process.exitCode = c),
};
