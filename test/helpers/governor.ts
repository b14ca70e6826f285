// A safety governor as its own root actor, for tests that run motion actions without a whole agent.
import { pino } from 'pino';
import { createActor, type AnyActorRef } from 'xstate';
import { governorMachine } from '../../actors/safety/governor.js';
import { ModeSafety, SafetyConfig, type SafetyConfigInput } from '../../src/config/safety.js';
import type { AgentConfig } from '../../src/config/schema.js';
import { AgentBus } from '../../src/cortex/events.js';
import { resolvePolicy } from '../../src/safety/policy.js';
import { realClock, type Clock } from '../../actors/modes/types.js';

export interface TestGovernor {
  actor: AnyActorRef;
  bus: AgentBus;
  stop(): void;
}

/**
 * Starts a governor for mode `mode` (default `m`) with the given global `safety` block (the socket off
 * unless given) and per-mode blocks; `clock` is the actor system's clock and the governor's `now`.
 */
export function startGovernor(
  safety: SafetyConfigInput = {},
  options: { mode?: string; modes?: Record<string, unknown>; clock?: Clock; bus?: AgentBus } = {},
): TestGovernor {
  const bus = options.bus ?? new AgentBus();
  const clock = options.clock ?? realClock;
  const mode = options.mode ?? 'm';
  const modes = Object.fromEntries(Object.entries(options.modes ?? { [mode]: {} }).map(([k, v]) => [k, { safety: ModeSafety.parse(v) }]));
  const config = { modes, safety: SafetyConfig.parse({ estop_socket: { enabled: false }, ...safety }) } as unknown as Pick<AgentConfig, 'modes' | 'safety'>;
  const actor = createActor(governorMachine, {
    input: { policy: resolvePolicy(config), bus, logger: pino({ level: 'silent' }), now: () => clock.now(), mode },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  actor.start();
  return { actor, bus, stop: () => actor.stop() };
}
