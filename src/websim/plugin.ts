// The `WebSim` simulator plugin's factory (its descriptor, with the config schema, is in src/plugins/simulators.ts).
import type { SimulatorFactory, SimulatorHandle } from '../cortex/contracts.js';
import { resolveWebSimOptions } from './options.js';
import { WebSim } from './server.js';

/**
 * Creates the agent's WebSim. An unsafe or invalid configuration (a non-loopback host without a
 * token, a short token) does not throw here: the handle's `start()` rejects with the WebSimError, so
 * the agent reports it where it reports every simulator that fails to start.
 */
export const createWebSim: SimulatorFactory = (config, ctx) => {
  let options: ReturnType<typeof resolveWebSimOptions>;
  try {
    options = resolveWebSimOptions(config);
  } catch (err) {
    const refused: SimulatorHandle = { start: () => Promise.reject(err), stop: async () => {} };
    return refused;
  }
  return new WebSim(options, {
    agent: ctx.agent,
    logger: ctx.logger,
    ...(ctx.stateDir ? { stateDir: ctx.stateDir } : {}),
    ...(ctx.startAfter ? { startAfter: ctx.startAfter } : {}),
  });
};
