// Replays every provider stream shape of the corpus through LocalLLM and the tick: streamed vs non-streamed answer equal, and the time from the first byte of the tool call to the action running.
// Run after `npm run build`: node bench/provider-quirks.js [--reps N] [--piece BYTES]
import { BehaviorSubject, EMPTY } from 'rxjs';
import { pino } from 'pino';
import { runTick } from '../dist/actors/cortex/tick.js';
import { createLocalLlm } from '../dist/src/cortex/llm/local-llm.js';
import { toolsForMode } from '../dist/src/cortex/tools.js';
import { AgentBus } from '../dist/src/cortex/events.js';
import { loadFixtures, startReplayServer } from '../dist/test/support/provider-replay.js';

import { finish, option } from './lib/bench.js';
const REPS = option('reps', 7, 2);
/** The stream is written in pieces of this many bytes, one per event-loop turn (a few TCP segments of a real network hold 1-2 KB). */
const PIECE = option('piece', 256);
/** Target: the action runs within this long of its tool call's first byte (median), on every shape. */
const TARGET_MS = 50;

const logger = pino({ level: 'silent' });
const entry = (name) => ({ name, llm_label: name, connector: 'console', implementation: 'passthrough', config: {}, exclude_from_prompt: false });
const mode = { system_prompt_base: 'You are a robot.', agent_actions: [entry('speak'), entry('move')] };
const config = { system_governance: '', system_prompt_examples: '', system_prompt_base: '' };

/** One tick against the replay server; the actions in order and when the first one ran (performance.now()). */
async function tick(baseUrl, stream) {
  const actions = [];
  let firstAt;
  const mark = (label, v) => {
    firstAt ??= performance.now();
    actions.push(`${label} ${JSON.stringify(v)}`);
  };
  const handles = mode.agent_actions.map((e) => ({
    entry: e,
    dispatch: (v) => mark(e.llm_label, v),
    run: async (v) => mark(e.llm_label, v),
    interrupt: () => {},
    queueLength: 0,
    busy$: new BehaviorSubject(false),
    stop: async () => {},
  }));
  let typed = 'Voice: please turn left';
  const llm = createLocalLlm(
    { base_url: `${baseUrl}/v1`, model: 'm', stream, retry: false, history_length: 0, context_tokens: 8192 },
    { logger, cloud: undefined },
  );
  const bus = new AgentBus();
  let error;
  bus.events$.subscribe((e) => {
    if (e.type === 'model.error') error = e.error;
  });
  const input = {
    finals: [],
    plugin: {
      type: 'TextInput',
      descriptor: 'Voice',
      listen: () => EMPTY,
      poll: async () => undefined,
      rawToText: () => undefined,
      formattedLatestBuffer: () => {
        const out = typed;
        typed = '';
        return out || undefined;
      },
      stop: async () => {},
    },
  };
  await runTick(
    {
      config,
      modeName: 'm',
      mode,
      inputs: [input],
      handles: () => handles,
      llm,
      toolsForMode,
      bus,
      logger,
      keywords: () => false,
      skipIdle: false,
      maxToolRounds: 1,
    },
    { seq: 1, slot: 1, dueAt: 0, startedAt: 0, latenessMs: 0, skipped: 0, wake: false },
    new AbortController().signal,
  );
  return { actions: actions.sort(), firstAt, error };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)] : Number.NaN;
};

const replay = await startReplayServer();
const results = [];
try {
  for (const f of loadFixtures()) {
    const cuts = [];
    for (let i = PIECE; i < f.bytes.length; i += PIECE) cuts.push(i);
    replay.serve(f, cuts);
    if (f.expect.error) {
      const r = await tick(replay.url, true);
      results.push({ fixture: f.name, provider: f.provider, answered: r.error?.includes(f.expect.error) === true, kind: 'error', error: r.error });
      continue;
    }
    const whole = await tick(replay.url, false);
    const toolMs = [];
    let equal = true;
    for (let i = 0; i < REPS; i++) {
      const marks = replay.toolByteAt.length;
      const s = await tick(replay.url, true);
      equal &&= JSON.stringify(s.actions) === JSON.stringify(whole.actions) && !s.error;
      if (replay.toolByteAt.length > marks && s.firstAt !== undefined) toolMs.push(s.firstAt - replay.toolByteAt.at(-1));
    }
    results.push({
      fixture: f.name,
      provider: f.provider,
      answered: equal && whole.actions.length > 0,
      actions: whole.actions.length,
      tool_byte_to_action_ms: toolMs.length ? Number(median(toolMs).toFixed(2)) : null,
    });
  }
} finally {
  await replay.close();
}

const answered = results.filter((r) => r.answered).length;
const timed = results.filter((r) => typeof r.tool_byte_to_action_ms === 'number');
const baseline = results.find((r) => r.fixture === 'openai-parallel-tools')?.tool_byte_to_action_ms ?? null;
const slow = timed.filter((r) => r.tool_byte_to_action_ms > TARGET_MS);
const worst = timed.reduce((m, r) => Math.max(m, r.tool_byte_to_action_ms), 0);
console.log(JSON.stringify({ reps: REPS, piece_bytes: PIECE, target_ms: TARGET_MS, baseline_openai_ms: baseline, results }, null, 2));
const missed = [];
if (answered !== results.length)
  missed.push(
    `${results.length - answered} shape(s) not answered: ${results
      .filter((r) => !r.answered)
      .map((r) => r.fixture)
      .join(', ')}`,
  );
if (slow.length) missed.push(`${slow.map((r) => `${r.fixture} ${r.tool_byte_to_action_ms} ms`).join(', ')} over ${TARGET_MS} ms`);
console.log(
  `${answered} of ${results.length} shapes answered; tool call first byte -> action: worst median ${worst.toFixed(1)} ms (OpenAI's shape ${baseline} ms, target ${TARGET_MS} ms); ${missed.length ? `MISSED target: ${missed.join('; ')}` : 'within target'}`,
);
await finish(0);
