// Property tests: no sequence of model tool calls puts a motion command on the wire while the e-stop is latched, outside the mode's allowed values, or above the rate limit.
import t from 'tap';
import fc from 'fast-check';
import { pino } from 'pino';
import { z } from 'zod';
import { SimulatedClock } from 'xstate';
import { createActionHandle } from '../../actors/actions/action.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import { runTick } from '../../actors/cortex/tick.js';
import { AgentConfig, type ActionConfig } from '../../src/config/schema.js';
import type { ConnectorFactory } from '../../src/cortex/action.js';
import { AgentBus } from '../../src/cortex/events.js';
import type { InputPlugin } from '../../src/cortex/input.js';
import type { LlmToolCall } from '../../src/cortex/llm.js';
import { toolsForMode } from '../../src/cortex/tools.js';
import { MOVES } from '../../src/plugins/schemas/actions.js';
import { startGovernor } from '../helpers/governor.js';

/** One line on the recording controller's wire, with what the test knew when it was written. */
interface WireLine {
  at: number;
  mode: string;
  line: string;
  latched: boolean;
}

let wire: WireLine[] = [];
let latchedNow = false;
let clock = new SimulatedClock();

/** A motion connector that writes the serial protocol's lines to `wire`: `MOVE <value>` per command, `STOP` per halt. */
const recorder: ConnectorFactory = (config) => {
  const mode = String((config as { mode?: string }).mode);
  const write = (line: string) => wire.push({ at: clock.now(), mode, line, latched: latchedNow });
  return {
    name: 'wire',
    async run(value, signal) {
      signal.throwIfAborted();
      write(`MOVE ${(value as { action: string }).action}`);
    },
    async stop() {},
    async halt() {
      write('STOP');
    },
  };
};
const registry = withPlugins(builtinPlugins, {
  connectors: [{ action: 'move', type: 'wire', description: 'recording wire', schema: z.looseObject({}), needs: () => [], motion: true, create: recorder }],
});
const entry = (mode: string): ActionConfig => ({
  name: 'move',
  llm_label: 'move',
  connector: 'wire',
  implementation: 'passthrough',
  config: { mode },
  exclude_from_prompt: false,
});
const plugins = await resolvePlugins(registry, { modes: { a: { agent_inputs: [], simulators: [], agent_actions: [entry('a')] } } });

const RATE = { commands: 3, per_seconds: 1 };
const ALLOWED_A = ['walk forward', 'turn left', 'turn right'];
const STOP_VALUE = 'stand still';

const config = AgentConfig.parse({
  version: 'v1.0.5',
  name: 'props',
  default_mode: 'a',
  allow_manual_switching: false,
  mode_memory_enabled: false,
  api_key: '',
  system_governance: '',
  cortex_llm: { type: 'X' },
  modes: {
    a: { display_name: 'a', description: 'a', system_prompt_base: 'a', hertz: 1, agent_actions: [entry('a')] },
    b: { display_name: 'b', description: 'b', system_prompt_base: 'b', hertz: 1, agent_actions: [entry('b')] },
  },
});

/** An input that always has something new, so every tick calls the model. */
const voice = { type: 'TextInput', descriptor: 'Voice', formattedLatestBuffer: () => 'go', stop: async () => {} } as unknown as InputPlugin;

const callArb: fc.Arbitrary<LlmToolCall> = fc.oneof(
  fc.record({ name: fc.constant('move'), arguments: fc.record({ action: fc.constantFrom(...MOVES) }) }),
  fc.record({ name: fc.constant('move'), arguments: fc.oneof(fc.constantFrom(...MOVES), fc.string(), fc.record({ action: fc.string() }), fc.anything()) }),
  fc.record({ name: fc.constantFrom('fly', 'MOVE', 'move '), arguments: fc.anything() }),
);

type Step = { kind: 'tick'; mode: 'a' | 'b'; calls: LlmToolCall[] } | { kind: 'estop' } | { kind: 'release' } | { kind: 'advance'; ms: number };
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('tick' as const), mode: fc.constantFrom('a' as const, 'b' as const), calls: fc.array(callArb, { maxLength: 5 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'estop' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'release' as const }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 1500 }) }) },
);

const settle = async () => {
  for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r));
};

async function runSequence(steps: Step[]): Promise<WireLine[]> {
  wire = [];
  latchedNow = false;
  clock = new SimulatedClock();
  const bus = new AgentBus();
  const logger = pino({ level: 'silent' });
  // Long timers: the properties are about what is refused, not about the stops the timers send.
  const governor = startGovernor(
    { rate_limit: RATE, deadman_seconds: 3600, max_continuous_seconds: 3600, model_stall_seconds: 3600 },
    { clock, bus, mode: 'a', modes: { a: { allowed_values: ALLOWED_A }, b: { motion: false } } },
  );
  const deps = (mode: string) => ({ logger, bus, mode, stateDir: '/nonexistent', write: () => {}, plugins });
  const handles = {
    a: createActionHandle(entry('a'), deps('a'), { safety: governor.actor }),
    b: createActionHandle(entry('b'), deps('b'), { safety: governor.actor }),
  };
  let seq = 0;
  try {
    for (const step of steps) {
      if (step.kind === 'advance') clock.increment(step.ms);
      else if (step.kind === 'estop') {
        governor.actor.send({ type: 'safety.estop', reason: 'property test', source: 'test' });
        latchedNow = true;
      } else if (step.kind === 'release') {
        latchedNow = false;
        governor.actor.send({ type: 'safety.release', source: 'test' });
      } else {
        const handle = handles[step.mode];
        await runTick(
          {
            config,
            modeName: step.mode,
            mode: config.modes[step.mode]!,
            inputs: [{ plugin: voice, finals: [] }],
            handles: () => [handle],
            llm: { type: 'script', ask: async () => ({ toolCalls: step.calls, model: 'script', latencyMs: 0 }) },
            toolsForMode,
            bus,
            logger,
            keywords: () => false,
            skipIdle: false,
            maxToolRounds: 1,
            now: () => clock.now(),
          },
          { seq: seq++, slot: seq, dueAt: clock.now(), startedAt: clock.now(), latenessMs: 0, skipped: 0, wake: false },
          new AbortController().signal,
        );
      }
      await settle();
    }
  } finally {
    await handles.a.stop();
    await handles.b.stop();
    governor.stop();
  }
  return wire;
}

let onWire = 0;
const motion = (w: WireLine) => w.line.startsWith('MOVE ');
const motionValue = (w: WireLine) => w.line.slice('MOVE '.length);

t.test('no sequence of tool calls, e-stops, releases and waits breaks a limit on the wire', async (t) => {
  await fc.assert(
    fc.asyncProperty(fc.array(stepArb, { minLength: 1, maxLength: 40 }), async (steps) => {
      const lines = await runSequence(steps);
      const moves = lines.filter(motion);
      onWire += moves.length;
      // Latched: nothing but STOP reaches the wire.
      if (moves.some((w) => w.latched)) return false;
      // Mode b forbids motion (the stop value passes); mode a allows its list (and the stop value).
      for (const w of moves) {
        const v = motionValue(w);
        if (v === STOP_VALUE) continue;
        if (w.mode === 'b' || !ALLOWED_A.includes(v)) return false;
      }
      // At most RATE.commands motion commands (not counting the stop value) in any window of RATE.per_seconds.
      const times = moves.filter((w) => motionValue(w) !== STOP_VALUE).map((w) => w.at);
      for (let i = 0; i < times.length; i++) {
        const inWindow = times.filter((x) => x > times[i]! - RATE.per_seconds * 1000 && x <= times[i]!).length;
        if (inWindow > RATE.commands) return false;
      }
      return true;
    }),
    { numRuns: 150 },
  );
  t.ok(onWire > 50, `150 random sequences held every limit, with ${onWire} motion commands on the wire`);
});

t.test('the recording wire and the tick path are live: allowed commands do reach it, and an e-stop puts STOP on it', async (t) => {
  const lines = await runSequence([
    { kind: 'tick', mode: 'a', calls: [{ name: 'move', arguments: { action: 'turn left' } }] },
    { kind: 'estop' },
    { kind: 'tick', mode: 'a', calls: [{ name: 'move', arguments: { action: 'turn right' } }] },
    { kind: 'release' },
    { kind: 'advance', ms: 2000 },
    {
      kind: 'tick',
      mode: 'a',
      calls: [
        { name: 'move', arguments: { action: 'walk forward' } },
        { name: 'move', arguments: { action: 'dance' } },
      ],
    },
  ]);
  t.same(
    lines.map((w) => w.line),
    ['MOVE turn left', 'STOP', 'STOP', 'MOVE walk forward', 'STOP', 'STOP'],
    'the e-stop halts both motion actions; after the release an allowed command passes and "dance" (not allowed in a) does not; stopping the actions halts them',
  );
});
