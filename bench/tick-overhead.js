// Benchmark: runtime overhead of one tick (10 inputs, 5 actions, an instant model) over the bare model call, measured in the same run.
import { EMPTY } from 'rxjs';
import { pino } from 'pino';
import { runTick } from '../dist/actors/tick.js';
import { createActionHandle } from '../dist/actors/actions/action.js';
import { AgentBus } from '../dist/src/cortex/events.js';
import { toolsForMode } from '../dist/src/cortex/tools.js';
import { WakeGate } from '../dist/src/cortex/wake.js';
import { builtinPlugins, resolvePlugins } from '../dist/actors/plugins.js';

const N = Number(process.env.BENCH_N ?? 5000);
/** Issue 29's target for the runtime's own share of a tick. */
const TARGET_MS = 0.1;
const logger = pino({ level: 'silent' });
const bus = new AgentBus();
bus.events$.subscribe(() => {}); // a reader, as --events or the view would be

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
const handles = actionEntries.map((e) => createActionHandle(e, { logger, bus, mode: 'bench', stateDir: '/tmp', write: () => {}, plugins }));

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

async function measure(fn) {
  for (let i = 0; i < 500; i++) await fn(); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < N; i++) await fn();
  return (performance.now() - t0) / N;
}

const baselineMs = await measure(() => llm.ask({ messages: [], tools: [] }, signal));
const tickMs = await measure(() => runTick(deps, { seq: seq++, slot: seq, dueAt: 0, startedAt: 0, latenessMs: 0, skipped: 0, wake: false }, signal));
for (const h of handles) await h.stop();
const overhead = tickMs - baselineMs;
console.log(
  JSON.stringify(
    { ticks: N, inputs: 10, actions: 5, baseline_model_call_ms: +baselineMs.toFixed(4), tick_ms: +tickMs.toFixed(4), overhead_ms: +overhead.toFixed(4) },
    null,
    2,
  ),
);
const line = `tick overhead: ${overhead.toFixed(3)} ms per tick (10 inputs, 5 actions, 3 tool calls, instant model; bare call ${baselineMs.toFixed(4)} ms)`;
console.log(overhead <= TARGET_MS ? `${line}; within target` : `${line}; MISSED target: ${overhead.toFixed(3)} ms per tick (target ${TARGET_MS} ms)`);
