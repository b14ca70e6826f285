// Shared plumbing of `cortexd keys` and `cortexd balance`: where to connect, which JWT, how errors and tables print.
import Table from 'cli-table3';
import { ConfigError, describeError } from '../errors.js';
import { redact } from '../redact.js';
import { AccountClient } from './account.js';
import { EMBEDDED, placeholders, readAddresses } from './addresses.js';
import { CloudHttp } from './http.js';
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

/** A usage problem: bad or missing option; exit code 2. */
export class AccountUsageError extends Error {}

export interface AccountOptions {
  jwt?: string;
  baseUrl?: string;
  json?: boolean;
}

/** Builds the account client from --jwt/CORTEX_JWT and --base-url/CORTEX_BASE_URL. */
export function accountClientFrom(opts: AccountOptions, io: CliIo): AccountClient {
  const jwt = opts.jwt ?? io.env.CORTEX_JWT;
  if (!jwt?.trim()) throw new AccountUsageError('no JWT: pass --jwt <token> or set CORTEX_JWT');
  const env = opts.baseUrl ? { ...io.env, CORTEX_BASE_URL: opts.baseUrl } : io.env;
  let baseUrl: string;
  try {
    const settings = readAddresses({}, { CORTEX_BASE_URL: env.CORTEX_BASE_URL });
    if (settings.base_url === EMBEDDED)
      throw new AccountUsageError('CORTEX_BASE_URL is "embedded": account commands need the address of a running service (see `cortexd cloud`)');
    if (placeholders(settings).includes('base_url')) throw new AccountUsageError('no service address: pass --base-url <url> or set CORTEX_BASE_URL');
    baseUrl = settings.base_url;
  } catch (err) {
    if (err instanceof ConfigError) throw new AccountUsageError(err.issues.map((i) => `${i.path}: ${i.message}`).join('; '));
    throw err;
  }
  const http = new CloudHttp({ baseUrl, ...(io.fetch ? { fetch: io.fetch } : {}), ...(io.retry ? { retry: io.retry } : {}) });
  return new AccountClient({ http, jwt: jwt.trim() });
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
