// Proves the safety block's velocity caps: resolved per mode over the global block, and applied by a DDS body to what it sends (signs kept, the obstacle guard's share too).
import t from 'tap';
import { capped } from '../../actors/actions/connectors/dds-body.js';
import { SafetyConfig } from '../../src/config/safety.js';
import { resolvePolicy, policyOf } from '../../src/safety/policy.js';
import { SpeedLimit } from '../../src/safety/obstacle-view.js';

t.test('a mode overrides the global caps; absent, there is none', async (t) => {
  const safety = SafetyConfig.parse({ max_linear_speed_mps: 0.5, max_angular_speed_dps: 45 });
  const policy = resolvePolicy({ safety, modes: { slow: { safety: { max_linear_speed_mps: 0.1 } }, normal: {} } } as never);
  t.match(policyOf(policy, 'slow'), { maxLinearMps: 0.1, maxAngularDps: 45 });
  t.match(policyOf(policy, 'normal'), { maxLinearMps: 0.5, maxAngularDps: 45 });
  t.match(resolvePolicy({ modes: { m: {} } } as never).global, { maxLinearMps: null, maxAngularDps: null });
  t.notOk(SafetyConfig.safeParse({ max_linear_speed_mps: 0 }).success, 'a cap is positive');
  t.notOk(SafetyConfig.safeParse({ max_linear_speed_mps: 11 }).success, 'and at most 10 m/s');
});

t.test('capped: magnitudes shrink to the caps, signs stay, the obstacle share scales a walk', async (t) => {
  const speed = new SpeedLimit();
  t.same(capped({ vx: 0.3, vy: 0, wz: 0 }, speed), { vx: 0.3, vy: 0, wz: 0 }, 'no cap: as asked');
  speed.maxLinearMps = 0.1;
  speed.maxAngularDps = 10;
  t.same(capped({ vx: -0.3, vy: 0, wz: 0 }, speed), { vx: -0.1, vy: 0, wz: 0 });
  const turn = capped({ vx: 0, vy: 0, wz: -0.5236 }, speed);
  t.equal(Math.round(turn.wz * 1000) / 1000, -0.175, 'a right turn at 10 deg/s');
  speed.maxLinearMps = Number.POSITIVE_INFINITY;
  speed.scales.forward = 0.5;
  t.same(capped({ vx: 0.3, vy: 0, wz: 0 }, speed), { vx: 0.15, vy: 0, wz: 0 }, 'half speed near a wall ahead');
  t.same(capped({ vx: -0.3, vy: 0, wz: 0 }, speed), { vx: -0.3, vy: 0, wz: 0 }, 'backing away is not slowed');
});
