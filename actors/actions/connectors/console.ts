// The `console` connector of every action: prints what the robot would do, one line per command.
import { z } from 'zod';
import type { PluginSpec } from '../../../src/plugin-registry.js';
import type { ConnectorFactory } from '../../../src/cortex/action.js';

export const ConsoleOptions = z.looseObject({
  /** Text before each line; default `[<action>]`. */
  prefix: z.string().optional(),
});

/** Renders an action value for a terminal: the sentence of `speak`, the action of `move`, etc. */
export function renderValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj);
    if (keys.length === 1 && typeof obj[keys[0]!] === 'string') return obj[keys[0]!] as string;
    return JSON.stringify(value);
  }
  return String(value);
}

export function consoleConnector(action: string): PluginSpec<ConnectorFactory> {
  return {
    type: 'console',
    description: `prints each ${action} command on the terminal (or as an event)`,
    schema: ConsoleOptions,
    create: (config, ctx) => {
      const options = ConsoleOptions.parse(config ?? {});
      const prefix = options.prefix ?? `[${action}]`;
      return {
        name: 'console',
        async run(value, signal) {
          signal.throwIfAborted();
          ctx.write(`${prefix} ${renderValue(value)}`);
        },
        async stop() {},
      };
    },
  };
}
