// `cortexd cloud`: runs the local hosted-API service in the foreground; `cloud token` and `cloud key` issue credentials from its database.
import type { Command } from 'commander';
import { PLAN_KEY_LIMITS } from '../src/cloud/catalog.js';
import { UsageError } from './output.js';

interface ServeOptions {
  host: string;
  port: string;
  db?: string;
  grammar?: string;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be an integer 0..65535, got ${value}`);
  return n;
}

/** The plans of the hosted API (catalog data; the service's allowance table names the same plans). */
const PLAN_NAMES = Object.keys(PLAN_KEY_LIMITS);

async function plan(value: string | undefined): Promise<string | undefined> {
  const { PLANS } = await import('../src/service/accounts.js');
  if (value !== undefined && !PLANS.includes(value)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
  return value;
}

/** `cortexd cloud`: the service in the foreground until SIGTERM or SIGINT, ready and watched under systemd. */
async function serve(opts: ServeOptions): Promise<void> {
  // The service (fastify, sqlite, the backends) loads only when this command runs.
  const [{ createLogger }, { startService }, { Notifier }, { Watchdog }] = await Promise.all([
    import('../src/log.js'),
    import('../src/service/index.js'),
    import('../src/systemd/notify.js'),
    import('../src/systemd/watchdog.js'),
  ]);
  const logger = createLogger({ base: { component: 'cloud' } });
  const grammar = opts.grammar === undefined ? undefined : opts.grammar === 'open' ? ('open' as const) : opts.grammar.split('|');
  const svc = await startService({ host: opts.host, port: port(opts.port), dbPath: opts.db, logger, backends: { asr: { grammar } } });
  logger.info({ url: svc.url, ws: svc.wsUrl, asr: svc.asrWsUrl, vlm: svc.vlmWsUrl }, 'cortexd cloud listening');
  process.stdout.write(`url=${svc.url}\nws_url=${svc.wsUrl}\nasr_ws_url=${svc.asrWsUrl}\nvlm_ws_url=${svc.vlmWsUrl}\n`);
  // Under systemd (Type=notify): ready once listening, watchdog pings from the event loop.
  const notifier = new Notifier({ onError: (m) => logger.warn(m) });
  const watchdog = new Watchdog(notifier);
  await notifier.ready(`listening on ${svc.url}`);
  watchdog.start();
  await new Promise<void>((resolve) => {
    const stop = (signal: string): void => {
      logger.info({ signal }, 'cortexd cloud stopping');
      watchdog.stop();
      void notifier.stopping(`stopping on ${signal}`);
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      void svc.close().then(resolve);
    };
    const onTerm = (): void => stop('SIGTERM');
    const onInt = (): void => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
}

export function register(program: Command): void {
  const cloud = program
    .command('cloud')
    .description('run the local hosted-API service (chat, speech, recognition, vision, keys) in the foreground')
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--port <port>', 'port (0 picks a free one)', '8420')
    .option('--db <path>', 'SQLite database (default <state dir>/cloud.sqlite)')
    .option('--grammar <phrases>', "recognition grammar: 'open' for the full English model, or phrases separated by '|'")
    .action(serve);

  cloud
    .command('token')
    .description('print a JWT for the account endpoints, signed by the local secret (creates the user if needed)')
    .requiredOption('--user <name>', 'user name')
    .option('--plan <plan>', `plan of a new user, or the new plan of an existing one (${PLAN_NAMES.join(', ')})`)
    .option('--ttl-days <days>', 'token lifetime in days', '30')
    .option('--db <path>', 'SQLite database (default <state dir>/cloud.sqlite)')
    .action(async (opts: { user: string; plan?: string; ttlDays: string; db?: string }) => {
      const days = Number(opts.ttlDays);
      if (!(days > 0)) throw new UsageError('--ttl-days must be a positive number');
      const { openAdmin } = await import('../src/service/index.js');
      const { admin, close } = openAdmin({ dbPath: opts.db });
      try {
        const p = await plan(opts.plan);
        admin.createUser(opts.user, p);
        if (p) admin.setPlan(opts.user, p);
        process.stdout.write(`${await admin.issueJwt(opts.user, Math.round(days * 86400))}\n`);
      } finally {
        close();
      }
    });

  cloud
    .command('key')
    .description('create an API key for a user directly in the local database and print it (shown once)')
    .requiredOption('--user <name>', 'user name (created if needed)')
    .option('--test', 'issue a key_test_ key instead of key_live_')
    .option('--db <path>', 'SQLite database (default <state dir>/cloud.sqlite)')
    .action(async (opts: { user: string; test?: boolean; db?: string }) => {
      const { openAdmin } = await import('../src/service/index.js');
      const { admin, close } = openAdmin({ dbPath: opts.db });
      try {
        const key = admin.createApiKey(opts.user, opts.test ? 'key_test_' : 'key_live_').apiKey;
        process.stderr.write(
          'warning: this is the only time the key is shown (only its hash is stored); store it now, for example in /etc/cortexd/env as OM_API_KEY\n',
        );
        process.stdout.write(`${key}\n`);
      } finally {
        close();
      }
    });
}
