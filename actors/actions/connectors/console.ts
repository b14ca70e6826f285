// The `console` connector of every action: prints what the robot would do, one line per command.
import type { ConnectorFactory } from '../../../src/cortex/action.js';
import { ConsoleOptions } from '../../../src/plugins/schemas/actions.js';

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

/** The `console` connector of `action` (its descriptor is in src/plugins/actions.ts). */
export function createConsoleConnector(action: string): ConnectorFactory {
  return (config, ctx) => {
    const options = ConsoleOptions.parse(config ?? {});
    const prefix = options.prefix ?? `[${action}]`;
    // What was printed last: a halt after a halt (or after the stop value) prints nothing more.
    let last = '';
    const standStill = `${prefix} stand still`;
    // A printed line ends as it is written: the action actor runs it in one step (runSync).
    const print = (value: unknown) => {
      last = `${prefix} ${renderValue(value)}`;
      ctx.write(last);
    };
    return {
      name: 'console',
      async run(value, signal) {
        signal.throwIfAborted();
        print(value);
      },
      runSync: print,
      async stop() {},
      // Used for move (a motion connector): the simulated robot's "stop" is a printed stand still.
      async halt() {
        if (last === standStill) return;
        last = standStill;
        ctx.write(standStill);
      },
    };
  };
}
