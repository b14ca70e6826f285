// The `websim` connector of face: the expression is shown by the WebSim page, which reads the face action's `done` events on the bus.
import type { ConnectorFactory } from '../../../src/cortex/action.js';

/**
 * Carrying out the command *is* the bus event: the action handle emits `{type:'action', name:'face',
 * connector:'websim', state:'done', value:{emotion}}` when `run` resolves, and the WebSim simulator draws
 * the face from it. There is no other channel, so the connector holds nothing and only fails when aborted.
 */
export const createWebsimFaceConnector: ConnectorFactory = () => ({
  name: 'websim',
  async run(_value, signal) {
    signal.throwIfAborted();
  },
  // The `done` event is the whole command, so the action actor reports it in one step.
  runSync() {},
  async stop() {},
});
