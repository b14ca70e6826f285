// The `body` connector of move: carries each move command out on the robot's body (the simulated body here; a robot over DDS in dds-body.ts).
import type { ConnectorFactory } from '../../../src/cortex/action.js';
import { abortableSleep } from '../../../src/cloud/retry.js';
import { BodyConnectorOptions, DDS_BODY_BINDINGS } from '../../../src/plugins/schemas/body.js';
import { createDdsBodyConnector } from './dds-body.js';
import { simBody } from '../../../devices/body/sim-body.js';
import { renderValue } from './console.js';
import { SPEED_LIMIT_KEY, SpeedLimit } from '../../../src/safety/obstacle-view.js';

/** How often a walking body moves on: a walk is a motion over its command time, not a jump. */
const STEP_MS = 50;

/**
 * A motion connector: the safety governor sits in front of it; `halt` makes the body stand still. A
 * walk moves `step_m` over `command_seconds`, a bit every 50 ms, each bit scaled by the obstacle
 * guard's speed share for its heading (1 when no guard runs): near a wall it slows, and the
 * governor's halt ends it where it is. A turn is done at once.
 */
export const createBodyConnector: ConnectorFactory = (raw, ctx) => {
  const o = BodyConnectorOptions.parse(raw ?? {});
  if (DDS_BODY_BINDINGS.has(o.binding)) return createDdsBodyConnector(o, ctx);
  const body = simBody(o.robot, o, ctx.bodies);
  let stillAfterHalt = false;
  const say = (line: string) => ctx.write(`[${o.robot}] ${line}`);
  const speed = ctx.bodies?.of(SPEED_LIMIT_KEY, () => new SpeedLimit()) ?? new SpeedLimit();
  /** Walks `metres` (negative: back) over the command time, as the speed share allows; the signal ends it where it is. */
  const walk = async (metres: number, what: string, signal: AbortSignal) => {
    const ms = o.command_seconds * 1000;
    if (ms <= 0) return body.walk(metres, what);
    const heading = metres >= 0 ? 'forward' : 'back';
    const steps = Math.max(1, Math.round(ms / STEP_MS));
    let s = body.read();
    for (let i = 0; i < steps; i++) {
      s = body.walk((metres / steps) * speed.scale(heading), what);
      await abortableSleep(ms / steps, signal);
    }
    return s;
  };
  return {
    name: 'body',
    async run(value, signal) {
      signal.throwIfAborted();
      stillAfterHalt = false;
      const what = renderValue(value).toLowerCase();
      if (/forward|ahead|back/.test(what)) {
        const s = await walk(/back/.test(what) ? -o.step_m : o.step_m, what, signal);
        say(`${what}: x ${s.x} m, y ${s.y} m, heading ${s.heading} deg`);
        return;
      }
      const s = /left/.test(what) ? body.turn(o.turn_deg, what) : /right/.test(what) ? body.turn(-o.turn_deg, what) : body.pose(what);
      say(`${what}: x ${s.x} m, y ${s.y} m, heading ${s.heading} deg`);
      await abortableSleep(o.command_seconds * 1000, signal);
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
