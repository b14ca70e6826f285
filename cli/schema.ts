// `cortexd schema`: print the JSON Schema of configuration files (committed as config/schema.json).
import type { Command } from 'commander';
import { out } from './output.js';

export function register(program: Command): void {
  program
    .command('schema')
    .description('print the JSON Schema of configuration files, for editors')
    .action(async () => {
      const { configJsonSchema } = await import('../src/config/json-schema.js');
      out(JSON.stringify(configJsonSchema(), null, 2));
    });
}
