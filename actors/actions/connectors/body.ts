// The `body` connector of move: carries each move command out on the robot's body (the simulated body here; a robot over DDS in dds-body.ts).
import type { ConnectorFactory } from '../../../src/cortex/action.js';
import { BodyConnectorOptions, DDS_BODY_BINDINGS } from '../../../src/plugins/schemas/body.js';
import { createDdsBodyConnector } from './dds-body.js';
import { simBody } from '../../../devices/body/sim-body.js';
import { renderValue } from './console.js';

/** Waits `ms` or until `signal` aborts (then rejects with its reason). */
function hold(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => (signal.removeEventListener('abort', onAbort), resolve()), ms);
    const onAbort = () => (clearTimeout(timer), reject(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** A motion connector: the safety governor sits in front of it; `halt` makes the body stand still. */
export const createBodyConnector: ConnectorFactory = (raw, ctx) => {
  const o = BodyConnectorOptions.parse(raw ?? {});
  if (DDS_BODY_BINDINGS.has(o.binding)) return createDdsBodyConnector(o, ctx);
  const body = simBody(o.robot, o, ctx.bodies);
  let stillAfterHalt = false;
  const say = (line: string) => ctx.write(`[${o.robot}] ${line}`);
  return {
    name: 'body',
    async run(value, signal) {
      signal.throwIfAborted();
      stillAfterHalt = false;
      const what = renderValue(value).toLowerCase();
      const s = /forward|ahead/.test(what)
        ? body.walk(o.step_m, what)
        : /back/.test(what)
          ? body.walk(-o.step_m, what)
          : /left/.test(what)
            ? body.turn(o.turn_deg, what)
            : /right/.test(what)
              ? body.turn(-o.turn_deg, what)
              : body.pose(what);
      say(`${what}: x ${s.x} m, y ${s.y} m, heading ${s.heading} deg`);
      await hold(o.command_seconds * 1000, signal);
    },
    async stop() {},
    async halt() {
      if (stillAfterHalt) return;
      stillAfterHalt = true;
      body.pose('stand still');
      say('stand still');
    },
  };
};
