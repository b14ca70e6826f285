// A safety governor as its own root actor, for tests that run motion actions without a whole agent.
import { pino } from 'pino';
import { z } from 'zod';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import type { ConnectorFactory } from '../../src/cortex/action.js';
import type { ActionConfig } from '../../src/config/schema.js';
import { createActor, type AnyActorRef } from 'xstate';
import { governorLogic } from '../../actors/safety/governor.js';
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
  const actor = createActor(governorLogic(), {
    input: { policy: resolvePolicy(config), bus, logger: pino({ level: 'silent' }), now: () => clock.now(), mode },
    ...(options.clock ? { clock: options.clock } : {}),
  });
  actor.start();
  return { actor, bus, stop: () => actor.stop() };
}

/**
 * One motion action `move` in mode `m` whose connector writes what reaches the robot into `wire`
 * (`MOVE <action>`, `STOP`), and `settle()`: a few turns of the event loop for a dispatch to land.
 */
export async function wireRig() {
  const wire: string[] = [];
  const recorder: ConnectorFactory = () => ({
    name: 'wire',
    run: async (value) => void wire.push(`MOVE ${(value as { action: string }).action}`),
    stop: async () => {},
    halt: async () => void wire.push('STOP'),
  });
  const registry = withPlugins(builtinPlugins, {
    connectors: [{ action: 'move', type: 'wire', description: 'w', schema: z.looseObject({}), needs: () => [], motion: true, create: recorder }],
  });
  const entry: ActionConfig = { name: 'move', llm_label: 'move', connector: 'wire', implementation: 'passthrough', config: {}, exclude_from_prompt: false };
  const plugins = await resolvePlugins(registry, { modes: { m: { agent_inputs: [], simulators: [], agent_actions: [entry] } } });
  const settle = async () => {
    for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r));
  };
  return { wire, entry, plugins, settle };
}
