// `cortexd balance`: prints the account's compute-unit balance as a table or JSON.
import type { Command } from 'commander';
import type { AccountOptions, CliIo } from '../src/cloud/account-cli.js';
import { accountOptions, processIo } from './account-options.js';

export function register(program: Command, io: CliIo = processIo): void {
  accountOptions(program.command('balance').description('show the compute-unit (CU) balance of the account (needs a JWT)')).action(
    async (opts: AccountOptions) => {
      const { accountClientFrom, runAccountCommand, table } = await import('../src/cloud/account-cli.js');
      return runAccountCommand(io, async () => {
        const balance = await accountClientFrom(opts, io).balance();
        if (opts.json) return io.out(JSON.stringify(balance, null, 2));
        io.out(
          table(
            ['field', 'value'],
            [
              ['plan', balance.plan],
              ['cu_balance', balance.cu_balance],
              ['monthly_unused_cu', balance.monthly_unused_cu],
              ['monthly_total_cu', balance.monthly_total_cu],
              ['current_period_end', balance.current_period_end],
              ['cancel_at_period_end', balance.cancel_at_period_end],
            ],
          ),
        );
      });
    },
  );
}
