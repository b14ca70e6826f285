// The `websim` connector of face: the expression is shown by the WebSim page, which reads the face action's `done` events on the bus.
import { z } from 'zod';
import type { ConnectorFactory } from '../../../src/cortex/action.js';
import type { PluginSpec } from '../../../src/plugin-registry.js';

export const WebsimFaceOptions = z.looseObject({});

/**
 * Carrying out the command *is* the bus event: the action handle emits `{type:'action', name:'face',
 * connector:'websim', state:'done', value:{emotion}}` when `run` resolves, and the WebSim simulator draws
 * the face from it. There is no other channel, so the connector holds nothing and only fails when aborted.
 */
export const websimFaceConnector: PluginSpec<ConnectorFactory> = {
  type: 'websim',
  description: 'shows the expression on the WebSim page (through the agent event bus)',
  schema: WebsimFaceOptions,
  create: () => ({
    name: 'websim',
    async run(_value, signal) {
      signal.throwIfAborted();
    },
    async stop() {},
  }),
};
