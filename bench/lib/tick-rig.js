// The tick of bench/tick-overhead.js and bench/record.js: 10 inputs, 5 actions, 3 tool calls, an instant model, on a given bus.
import { EMPTY } from 'rxjs';
import { pino } from 'pino';
import { runTick } from '../../dist/actors/cortex/tick.js';
import { createActionHandle } from '../../dist/actors/actions/action.js';
import { toolsForMode } from '../../dist/src/cortex/tools.js';
import { WakeGate } from '../../dist/src/cortex/wake.js';
import { builtinPlugins, resolvePlugins } from '../../dist/actors/plugin-registry.js';

/** `tick()` runs one tick; `ask()` is the bare model call; `stop()` stops the action handles. */
export async function tickRig(bus, stateDir = '/tmp') {
  const logger = pino({ level: 'silent' });
  const actionEntries = [
    ['speak', 'speak'],
    ['face', 'emotion'],
    ['move', 'move'],
    ['face', 'face2'],
    ['move', 'move2'],
  ].map(([name, llm_label]) => ({ name, llm_label, connector: 'console', implementation: 'passthrough', config: {}, exclude_from_prompt: false }));
  const mode = { system_prompt_base: 'You are a robot.', agent_actions: actionEntries, hertz: 100 };
  const config = { system_governance: 'Obey the laws.', system_prompt_examples: 'Say hello.', system_prompt_base: '' };
  const plugins = await resolvePlugins(builtinPlugins, { modes: { bench: { agent_inputs: [], agent_actions: actionEntries, simulators: [] } } });
  const handles = actionEntries.map((e) => createActionHandle(e, { logger, bus, mode: 'bench', stateDir, write: () => {}, plugins }));
  let seq = 0;
  const inputs = Array.from({ length: 10 }, (_, i) => ({
    finals: [],
    plugin: {
      type: `Input${i}`,
      descriptor: i === 0 ? 'Voice' : `Sensor ${i}`,
      listen: () => EMPTY,
      poll: async () => undefined,
      rawToText: () => undefined,
      formattedLatestBuffer: () => `reading ${i} at tick ${seq}`,
      stop: async () => {},
    },
  }));
  const answer = {
    text: undefined,
    toolCalls: [
      { name: 'speak', arguments: { sentence: 'Hello there.' } },
      { name: 'emotion', arguments: { emotion: 'joy' } },
      { name: 'move', arguments: { action: 'sit' } },
    ],
    model: 'instant',
    latencyMs: 0,
  };
  const llm = { type: 'instant', ask: async () => answer };
  const deps = {
    config,
    modeName: 'bench',
    mode,
    inputs,
    handles: () => handles,
    llm,
    toolsForMode,
    bus,
    logger,
    keywords: () => false,
    // The loop's own gate, as the agent gives each run of a mode.
    wake: new WakeGate(),
    skipIdle: true,
    maxToolRounds: 3,
  };
  const signal = new AbortController().signal;
  return {
    tick: () => runTick(deps, { seq: seq++, slot: seq, dueAt: 0, startedAt: 0, latenessMs: 0, skipped: 0, wake: false }, signal),
    ask: () => llm.ask({ messages: [], tools: [] }, signal),
    stop: async () => {
      for (const h of handles) await h.stop();
    },
  };
}
