// Proves the account client and `cortexd balance` / `cortexd keys` against the local service: tables, JSON, secret once, one-line errors, exit codes.
import { Command } from 'commander';
import t from 'tap';
import { createAccountClient } from '../../src/cloud/client.js';
import { register as registerBalance } from '../../cli/balance.js';
import { register as registerKeys } from '../../cli/keys.js';
import type { CliIo } from '../../src/cloud/account-cli.js';
import { startService, type RunningService } from '../../src/service/index.js';

let svc: RunningService;
let limited: RunningService;
let jwt: string;
t.before(async () => {
  svc = await startService({ dbPath: ':memory:', jwtSecret: 's'.repeat(32), keyRateLimit: { capacity: 1000, refillPerSecond: 100 } });
  svc.admin.createUser('ada', 'starter');
  jwt = await svc.admin.issueJwt('ada');
  limited = await startService({ dbPath: ':memory:', jwtSecret: 's'.repeat(32), keyRateLimit: { capacity: 1, refillPerSecond: 1 / 120 } });
});
t.teardown(async () => {
  await svc.close();
  await limited.close();
});

/** Runs `cortexd <args>` through the real command modules, capturing output and the exit code. */
async function cli(args: string[], env: Record<string, string | undefined>) {
  const io: CliIo & { stdout: string[]; stderr: string[]; code: number } = {
    stdout: [],
    stderr: [],
    code: 0,
    env,
    out(l) {
      this.stdout.push(l);
    },
    err(l) {
      this.stderr.push(l);
    },
    setExitCode(c) {
      this.code = c;
    },
    retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 10_000, sleep: async () => undefined },
  };
  const program = new Command('cortexd').exitOverride().configureOutput({ writeOut: () => undefined, writeErr: (s) => io.stderr.push(s) });
  registerBalance(program, io);
  registerKeys(program, io);
  await program.parseAsync(args, { from: 'user' });
  return { out: io.stdout.join('\n'), err: io.stderr.join('\n'), code: io.code };
}

t.test('client: balance, create, list, delete', async (t) => {
  const acc = createAccountClient({ baseUrl: svc.url, jwt });
  const bal = await acc.balance();
  t.equal(bal.plan, 'starter');
  t.type(bal.cu_balance, 'number');
  const created = await acc.createKey();
  t.match(created.api_key, /^key_(live|test)_/);
  t.equal(created.api_key_info.total_cost, 0);
  t.match(created.api_key_info.name, /^api-key-/);
  const listed = await acc.listKeys();
  t.ok(listed.some((k) => k.id === created.api_key_info.id));
  t.notOk(JSON.stringify(listed).includes(created.api_key), 'listing never contains the secret');
  t.ok(listed.every((k) => k.deleted === false));
  t.match((await acc.deleteKey(created.api_key_info.id)).message, /./);
  t.notOk(
    (await acc.listKeys()).some((k) => k.id === created.api_key_info.id),
    'deleted key no longer listed',
  );
  await t.rejects(acc.deleteKey(created.api_key_info.id), { name: 'CloudNotFoundError', message: '404: API key not found' });
  await t.rejects(acc.deleteKey(''), { name: 'CloudValidationError' });
});

t.test('client: 401 User not found for a bad JWT, 403 at the plan key limit', async (t) => {
  await t.rejects(createAccountClient({ baseUrl: svc.url, jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.bad' }).balance(), {
    name: 'CloudAuthError',
    message: '401: User not found',
  });
  svc.admin.createUser('full', 'starter');
  const acc = createAccountClient({ baseUrl: svc.url, jwt: await svc.admin.issueJwt('full') });
  for (let i = 0; i < 5; i++) await acc.createKey();
  const err = await acc.createKey().catch((e: unknown) => e);
  t.match(err, { name: 'CloudForbiddenError', status: 403 });
  t.match((err as Error).message, /^403: .*5/, 'the message states the limit');
});

t.test('client: 429 with a long Retry-After is surfaced with its delay, not waited', async (t) => {
  limited.admin.createUser('rl', 'starter');
  const acc = createAccountClient({ baseUrl: limited.url, jwt: await limited.admin.issueJwt('rl') });
  await acc.balance();
  const err = await acc.listKeys().catch((e: unknown) => e);
  t.match(err, { name: 'CloudRateLimitError', status: 429, message: /^429: Rate limit exceeded/ });
  t.ok(((err as { retryAfterMs?: number }).retryAfterMs ?? 0) > 30_000);
});

t.test('cortexd balance: table and --json', async (t) => {
  const env = { CORTEX_JWT: jwt, CORTEX_BASE_URL: svc.url };
  const table = await cli(['balance'], env);
  t.equal(table.code, 0);
  t.match(table.out, /plan\s*│\s*starter/);
  t.match(table.out, /cu_balance/);
  const json = await cli(['balance', '--json'], env);
  t.equal(JSON.parse(json.out).plan, 'starter');
  const flags = await cli(['balance', '--json', '--jwt', jwt, '--base-url', svc.url], {});
  t.equal(JSON.parse(flags.out).plan, 'starter', '--jwt and --base-url work without environment');
});

t.test('cortexd keys create shows the secret once; list never shows it; delete', async (t) => {
  const env = { CORTEX_JWT: jwt, CORTEX_BASE_URL: svc.url };
  const created = await cli(['keys', 'create'], env);
  t.equal(created.code, 0);
  const secret = /api_key: (key_[\w-]+)/.exec(created.out)?.[1];
  t.ok(secret, 'secret printed');
  t.match(created.err, /only time the secret is shown/);
  const id = /│ ([0-9a-zA-Z_-]{6,}) +│ api-key-/.exec(created.out)?.[1];
  t.ok(id, 'table row with the id');
  const list = await cli(['keys', 'list'], env);
  t.match(list.out, id!);
  t.notMatch(list.out, secret!);
  const listJson = JSON.parse((await cli(['keys', 'list', '--json'], env)).out);
  t.ok(listJson.api_keys.some((k: { id: string }) => k.id === id));
  const del = await cli(['keys', 'delete', id!], env);
  t.equal(del.code, 0);
  const again = await cli(['keys', 'delete', id!], env);
  t.equal(again.err, '404: API key not found');
  t.equal(again.code, 1);
  const createdJson = JSON.parse((await cli(['keys', 'create', '--json'], env)).out);
  t.match(createdJson.api_key, /^key_/);
});

t.test('cortexd keys/balance errors are one clear line with a non-zero exit', async (t) => {
  const noJwt = await cli(['balance'], { CORTEX_BASE_URL: svc.url });
  t.same([noJwt.code, noJwt.err], [2, 'no JWT: pass --jwt <token> or set CORTEX_JWT']);
  const noUrl = await cli(['keys', 'list'], { CORTEX_JWT: jwt });
  t.equal(noUrl.code, 2);
  t.match(noUrl.err, /CORTEX_BASE_URL/);
  const badUrl = await cli(['keys', 'list'], { CORTEX_JWT: jwt, CORTEX_BASE_URL: 'ftp://x' });
  t.equal(badUrl.code, 2);
  t.match(badUrl.err, /scheme ftp is not allowed/);
  const badJwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.bad';
  const denied = await cli(['keys', 'list'], { CORTEX_JWT: badJwt, CORTEX_BASE_URL: svc.url });
  t.same([denied.code, denied.err], [1, '401: User not found']);
  t.notMatch(denied.out + denied.err, badJwt);
  svc.admin.createUser('capped', 'starter');
  const env = { CORTEX_JWT: await svc.admin.issueJwt('capped'), CORTEX_BASE_URL: svc.url };
  for (let i = 0; i < 5; i++) t.equal((await cli(['keys', 'create'], env)).code, 0);
  const limit = await cli(['keys', 'create'], env);
  t.equal(limit.code, 1);
  t.match(limit.err, /^403: /);
  t.equal(limit.err.split('\n').length, 1, 'one line');
  const down = await cli(['balance'], { CORTEX_JWT: jwt, CORTEX_BASE_URL: 'http://127.0.0.1:9' });
  t.equal(down.code, 1);
  t.match(down.err, /connection failed/);
});
