// `cortexd keys list|create|delete ID`: manages the account's API keys; a new key's secret is printed once, with a warning.
import type { Command } from 'commander';
import type { AccountOptions, CliIo } from '../src/cloud/account-cli.js';
import type { ApiKeyRecord } from '../src/cloud/protocol.js';
import { accountOptions, processIo } from './account-options.js';

const keyRows = (keys: ApiKeyRecord[]) => keys.map((k) => [k.id, k.name, k.prefix, k.total_cost, k.created_at]);
const KEY_HEAD = ['id', 'name', 'prefix', 'total_cost (CU)', 'created_at'];

/** The account client and its output helpers, loaded when a command runs. */
const account = () => import('../src/cloud/account-cli.js');

export function register(program: Command, io: CliIo = processIo): void {
  const keys = program.command('keys').description('list, create and delete API keys (needs a JWT)');

  accountOptions(keys.command('list').description('list active API keys (secrets are never listed)')).action(async (opts: AccountOptions) => {
    const { accountClientFrom, runAccountCommand, table } = await account();
    return runAccountCommand(io, async () => {
      const list = await accountClientFrom(opts, io).listKeys();
      if (opts.json) return io.out(JSON.stringify({ api_keys: list }, null, 2));
      if (list.length === 0) return io.out('no API keys');
      io.out(table(KEY_HEAD, keyRows(list)));
    });
  });

  accountOptions(keys.command('create').description('create an API key and print its secret once')).action(async (opts: AccountOptions) => {
    const { accountClientFrom, runAccountCommand, table } = await account();
    return runAccountCommand(io, async () => {
      const created = await accountClientFrom(opts, io).createKey();
      io.err('warning: this is the only time the secret is shown; store it now (for example in /etc/cortexd/env as OM_API_KEY, which the runtime reads)');
      if (opts.json) return io.out(JSON.stringify(created, null, 2));
      io.out(table(KEY_HEAD, keyRows([created.api_key_info])));
      io.out(`api_key: ${created.api_key}`);
    });
  });

  accountOptions(
    keys
      .command('delete')
      .argument('<id>', 'id of the key (see `cortexd keys list`)')
      .description('delete an API key; it stops working at once and this cannot be undone'),
  ).action(async (id: string, opts: AccountOptions) => {
    const { accountClientFrom, runAccountCommand } = await account();
    return runAccountCommand(io, async () => {
      const res = await accountClientFrom(opts, io).deleteKey(id);
      if (opts.json) return io.out(JSON.stringify(res, null, 2));
      io.out(res.message);
    });
  });
}
