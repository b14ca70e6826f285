// Shared plumbing of `cortexd keys` and `cortexd balance`: where to connect, which JWT, how errors and tables print.
import Table from 'cli-table3';
import type { Command } from 'commander';
import { ConfigError, describeError } from '../errors.js';
import { redact } from '../redact.js';
import type { AccountClient } from './account.js';
import { EMBEDDED, placeholders, readAddresses } from './addresses.js';
import { createAccountClient } from './client.js';
import { CloudHttpError, CloudValidationError } from './errors.js';
import type { RetryOptions } from './retry.js';

/** Where the commands write and what they read; replaced in tests. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  env: Record<string, string | undefined>;
  /** Test hook: how HTTP is done and retried. */
  fetch?: typeof fetch;
  retry?: RetryOptions;
  setExitCode(code: number): void;
}

export const processIo: CliIo = {
  out: (l) => void process.stdout.write(`${l}\n`),
  err: (l) => void process.stderr.write(`${l}\n`),
  env: process.env,
  setExitCode: (c) => void (process.exitCode = c),
};

/** A usage problem: bad or missing option; exit code 2. */
export class AccountUsageError extends Error {}

export interface AccountOptions {
  jwt?: string;
  baseUrl?: string;
  json?: boolean;
}

/** Adds the options every account command shares. */
export function accountOptions(cmd: Command): Command {
  return cmd
    .option('--jwt <token>', 'identity-provider JWT (default: $CORTEX_JWT; prefer the variable, arguments show in ps)')
    .option('--base-url <url>', 'HTTP address of the service (default: $CORTEX_BASE_URL)')
    .option('--json', 'print JSON instead of a table');
}

/** Builds the account client from --jwt/CORTEX_JWT and --base-url/CORTEX_BASE_URL. */
export function accountClientFrom(opts: AccountOptions, io: CliIo): AccountClient {
  const jwt = opts.jwt ?? io.env.CORTEX_JWT;
  if (!jwt?.trim()) throw new AccountUsageError('no JWT: pass --jwt <token> or set CORTEX_JWT');
  const env = opts.baseUrl ? { ...io.env, CORTEX_BASE_URL: opts.baseUrl } : io.env;
  let baseUrl: string;
  try {
    const settings = readAddresses({}, { CORTEX_BASE_URL: env.CORTEX_BASE_URL });
    if (settings.base_url === EMBEDDED) throw new AccountUsageError('CORTEX_BASE_URL is "embedded": account commands need the address of a running service (see `cortexd cloud`)');
    if (placeholders(settings).includes('base_url')) throw new AccountUsageError('no service address: pass --base-url <url> or set CORTEX_BASE_URL');
    baseUrl = settings.base_url;
  } catch (err) {
    if (err instanceof ConfigError) throw new AccountUsageError(err.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    throw err;
  }
  return createAccountClient({ baseUrl, jwt: jwt.trim(), ...(io.fetch ? { fetch: io.fetch } : {}), ...(io.retry ? { retry: io.retry } : {}) });
}

/** One line for any failure: `403: plan limit reached ...`, a usage problem, or a network error. Returns the exit code. */
export function reportAccountError(err: unknown, io: CliIo): number {
  if (err instanceof AccountUsageError || err instanceof CloudValidationError) {
    io.err(redact(err.message));
    return 2;
  }
  if (err instanceof CloudHttpError) {
    io.err(`${err.status}: ${err.serverMessage}`);
    return 1;
  }
  io.err(describeError(err));
  return 1;
}

/** Runs a command body with the shared error handling. */
export async function runAccountCommand(io: CliIo, body: () => Promise<void>): Promise<void> {
  try {
    await body();
  } catch (err) {
    io.setExitCode(reportAccountError(err, io));
  }
}

/** A borderless-enough table that stays readable in a journal or a pipe. */
export function table(head: string[], rows: Array<Array<string | number | boolean | null>>): string {
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) t.push(r.map((c) => (c === null ? '-' : String(c))));
  return t.toString();
}
