// The `body` connector on a real robot over DDS (unitree_dds, ros2): each move as velocities on the wire, a stop on every halt and at the end.
import { CortexError } from '../../../src/errors.js';
import type { ActionConnector, ActionContext } from '../../../src/cortex/action.js';
import type { BodyConnectorOptions } from '../../../src/plugins/schemas/body.js';
import { ddsBodyOf } from '../../../devices/dds/bodies.js';
import { deviceSessionInput } from '../../streams/device-session.js';
import { renderValue } from './console.js';
import { SPEED_LIMIT_KEY, SpeedLimit } from '../../../src/safety/obstacle-view.js';

/** A command the robot cannot take now (it is lost) or does not know. */
export class BodyCommandError extends CortexError {
  constructor(message: string) {
    super('body_command', message);
    this.name = 'BodyCommandError';
  }
}

/** Velocities of a command (x forward, y left, wz counter-clockwise) and how long it runs; null: not a motion. */
export function motionOf(what: string, o: BodyConnectorOptions): { vx: number; vy: number; wz: number; ms: number } | null {
  const v = o.linear_speed_mps;
  const w = (o.angular_speed_dps * Math.PI) / 180;
  const walk = (o.step_m / v) * 1000;
  const turn = (o.turn_deg / o.angular_speed_dps) * 1000;
  if (/forward|ahead/.test(what)) return { vx: v, vy: 0, wz: 0, ms: walk };
  if (/back/.test(what)) return { vx: -v, vy: 0, wz: 0, ms: walk };
  if (/left/.test(what)) return { vx: 0, vy: 0, wz: w, ms: turn };
  if (/right/.test(what)) return { vx: 0, vy: 0, wz: -w, ms: turn };
  return null;
}

/**
 * The velocities sent now for motion `m`: the governor's caps of the granting mode (`max_linear_speed_mps`,
 * `max_angular_speed_dps`) and the obstacle guard's share of the heading's speed (1 without a guard).
 * Signs are kept; only magnitudes shrink.
 */
export function capped(m: { vx: number; vy: number; wz: number }, speed: SpeedLimit): { vx: number; vy: number; wz: number } {
  const share = m.vx > 0 ? speed.scale('forward') : m.vx < 0 ? speed.scale('back') : 1;
  const linear = Math.hypot(m.vx, m.vy) * share;
  const k = linear > speed.maxLinearMps ? speed.maxLinearMps / linear : 1;
  const maxW = (speed.maxAngularDps * Math.PI) / 180;
  const wz = Math.sign(m.wz) * Math.min(Math.abs(m.wz), maxW);
  return { vx: m.vx * share * k, vy: m.vy * share * k, wz };
}

/**
 * The connector. The robot's presence is a session-machine actor (the action actor's
 * child `device:dds`, its states on the bus as `stream` events of kind `dds`): lost, it is reported
 * ("lost the robot: ...") and commands are refused until it is back. A command repeats its velocity
 * at `command_hz` for its duration, each time capped by the governor's limits and the obstacle guard
 * (`capped`: a mode's lower cap or a nearer wall applies from the next repeat on), then sends the stop; `halt` (the governor's dead-man, e-stop,
 * stopping) sends the stop at once; `stop` (shutdown) sends it and lets go of the body.
 */
export function createDdsBodyConnector(o: BodyConnectorOptions, ctx: ActionContext): ActionConnector {
  const body = ddsBodyOf(o);
  // A recording (--record) gets what this connector puts on the wire (cmd_vel, sport requests), stops included.
  const untap = ctx.media?.dds ? body.participant.tap(ctx.media) : undefined;
  const say = (line: string) => ctx.write(`[${o.robot}] ${line}`);
  const speed = ctx.bodies?.of(SPEED_LIMIT_KEY, () => new SpeedLimit()) ?? new SpeedLimit();
  let stillAfterHalt = false;
  let released = false;
  return {
    name: 'body',
    session: deviceSessionInput(body.device(), 'dds', { healthyAfterMs: 0 }),
    async run(value, signal) {
      signal.throwIfAborted();
      if (!body.present$.value) throw new BodyCommandError(`lost the robot: ${body.absence}; "${renderValue(value)}" not sent`);
      stillAfterHalt = false;
      const what = renderValue(value).toLowerCase();
      const m = motionOf(what, o);
      if (!m) {
        if (/stand still|stop|halt/.test(what)) body.stop();
        else if (!body.gesture(what))
          throw new BodyCommandError(`${o.robot} has no "${what}" (it walks, turns and stops${o.binding === 'unitree_dds' ? ', stands up, sits, waves' : ''})`);
        body.label(what);
        say(what);
        return;
      }
      body.label(what);
      const first = capped(m, speed);
      const capNote = first.vx !== m.vx || first.vy !== m.vy || first.wz !== m.wz ? ' (capped by safety)' : '';
      say(
        `${what}: vx ${first.vx.toFixed(2)} m/s, vy ${first.vy.toFixed(2)} m/s, yaw ${first.wz.toFixed(2)} rad/s for ${(m.ms / 1000).toFixed(1)} s${capNote}`,
      );
      await new Promise<void>((resolve, reject) => {
        const started = Date.now();
        const tick = () => {
          if (Date.now() - started >= m.ms) return finish();
          try {
            const v = capped(m, speed);
            body.drive(v.vx, v.vy, v.wz);
          } catch (err) {
            return finish(err as Error);
          }
        };
        const timer = setInterval(tick, 1000 / o.command_hz);
        const onAbort = () => finish(signal.reason as Error);
        const lost = body.present$.subscribe((p) => {
          if (!p) finish(new BodyCommandError(`lost the robot: ${body.absence}`));
        });
        function finish(err?: Error) {
          clearInterval(timer);
          signal.removeEventListener('abort', onAbort);
          queueMicrotask(() => lost.unsubscribe());
          try {
            body.stop();
          } catch {
            // the stop goes out with the next halt
          }
          if (err) reject(err);
          else resolve();
        }
        signal.addEventListener('abort', onAbort, { once: true });
        tick();
      });
      body.label('stand still');
    },
    async halt() {
      if (stillAfterHalt || released) return;
      stillAfterHalt = true;
      body.stop();
      body.label('stand still');
      say('stand still');
    },
    async stop() {
      if (released) return;
      released = true;
      body.release();
      untap?.();
    },
  };
}
