// One tick: idle ticks skip the model, keyword transitions end the tick, tool calls reach actions, unknown tools are dropped, MCP rounds are bounded.
import t from 'tap';
import { BehaviorSubject, EMPTY } from 'rxjs';
import { pino } from 'pino';
import { runTick, type TickDeps, type TickInput } from '../../actors/tick.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { ActionHandle, McpHub } from '../../src/cortex/contracts.js';
import type { LlmAnswer, LlmRequest } from '../../src/cortex/llm.js';
import type { ActionConfig, AgentConfig, ModeConfig } from '../../src/config/schema.js';
import { toolsForMode } from '../../src/cortex/tools.js';

const entry = (name: string, label: string) =>
  ({ name, llm_label: label, connector: 'console', implementation: 'passthrough', config: {}, exclude_from_prompt: false }) as ActionConfig;
const mode = { system_prompt_base: 'be nice', agent_actions: [entry('speak', 'speak'), entry('face', 'emotion')] } as unknown as ModeConfig;
const config = { system_governance: 'laws', system_prompt_examples: '', system_prompt_base: '' } as unknown as AgentConfig;

function handle(e: ActionConfig, log: unknown[]): ActionHandle {
  return {
    entry: e,
    dispatch: (v) => void log.push([e.llm_label, v]),
    // The tick speaks through run() (it follows each sentence to its end), other actions through dispatch().
    run: async (v) => void log.push([e.llm_label, v]),
    interrupt: () => {},
    queueLength: 0,
    busy$: new BehaviorSubject(false),
    stop: async () => {},
  };
}

function input(texts: string[], finals: string[] = texts): TickInput {
  let buf = [...texts];
  return {
    finals: [...finals],
    plugin: {
      type: 'TextInput',
      descriptor: 'Voice',
      listen: () => EMPTY,
      poll: async () => undefined,
      rawToText: () => undefined,
      formattedLatestBuffer: () => {
        const out = buf.length ? `Voice: ${buf.join('\n')}` : undefined;
        buf = [];
        return out;
      },
      stop: async () => {},
    },
  };
}

function setup(answers: LlmAnswer[], opts: Partial<TickDeps> = {}) {
  const dispatched: unknown[] = [];
  const asked: LlmRequest[] = [];
  const events: AgentEvent[] = [];
  const bus = new AgentBus();
  bus.events$.subscribe((e) => events.push(e));
  const handles = mode.agent_actions.map((e) => handle(e, dispatched));
  const deps: TickDeps = {
    config,
    modeName: 'm',
    mode,
    inputs: [],
    handles: () => handles,
    llm: { type: 'fake', ask: async (req) => (asked.push(structuredClone(req)), answers.shift() ?? { toolCalls: [], model: 'fake', latencyMs: 1 }) },
    toolsForMode,
    bus,
    logger: pino({ level: 'silent' }),
    keywords: () => false,
    skipIdle: true,
    maxToolRounds: 3,
    ...opts,
  };
  return { deps, dispatched, asked, events };
}
const req = { seq: 4, slot: 4, dueAt: 0, startedAt: 0, latenessMs: 0, skipped: 0, wake: false };
const signal = new AbortController().signal;

t.test('a tick with nothing new does not call the model; with skip_idle off it does', async (t) => {
  const a = setup([], { inputs: [input([])] });
  t.same(await runTick(a.deps, req, signal), { calledModel: false });
  t.equal(a.asked.length, 0);
  const b = setup([], { inputs: [input([])], skipIdle: false });
  t.same(await runTick(b.deps, req, signal), { calledModel: true });
  t.equal(b.asked.length, 1);
});

t.test('keyword rules see the final texts first; a transition ends the tick before the model', async (t) => {
  const seen: string[] = [];
  const a = setup([], { inputs: [input(['go to sleep'])], keywords: (text) => (seen.push(text), true) });
  t.same(await runTick(a.deps, req, signal), { calledModel: false });
  t.same(seen, ['go to sleep']);
  t.equal(a.asked.length, 0);
});

t.test('tool calls go to the actions by label; unknown tools are logged and dropped; plain text is spoken', async (t) => {
  const a = setup(
    [
      {
        text: 'hello!',
        toolCalls: [
          { name: 'emotion', arguments: { emotion: 'joy' } },
          { name: 'fly', arguments: {} },
        ],
        model: 'fake',
        latencyMs: 3,
      },
    ],
    { inputs: [input(['hi'])] },
  );
  await runTick(a.deps, req, signal);
  t.same(a.dispatched, [
    ['emotion', { emotion: 'joy' }],
    ['speak', { sentence: 'hello!' }],
  ]);
  t.ok(a.events.some((e) => e.type === 'error' && /unknown tool "fly"/.test(e.message)));
  t.same(
    a.asked[0]!.tools.map((x) => x.function.name),
    ['speak', 'emotion'],
  );
  t.match(a.asked[0]!.messages[1]!.content, /INPUT: Voice\n\/\/ START\nhi\n\/\/ END/);
  t.ok(a.events.some((e) => e.type === 'prompt' && e.tick === 4));
  t.ok(a.events.some((e) => e.type === 'model.answer' && e.latency_ms === 3));
});

t.test('MCP tool results are fed back to the model, for at most maxToolRounds rounds', async (t) => {
  const calls: unknown[] = [];
  const hub: McpHub = {
    tools: () => [{ type: 'function', function: { name: 'mcp_fs_read', parameters: { type: 'object' } } }],
    has: (n) => n === 'mcp_fs_read',
    call: async (_n, args) => (calls.push(args), 'file contents'),
  };
  const again = (): LlmAnswer => ({ toolCalls: [{ id: 'c1', name: 'mcp_fs_read', arguments: { path: 'x' } }], model: 'fake', latencyMs: 1 });
  const a = setup([again(), again(), again(), again()], { inputs: [input(['read x'])], hub });
  await runTick(a.deps, req, signal);
  t.equal(a.asked.length, 3, 'three rounds, not four');
  t.equal(calls.length, 3);
  const second = a.asked[1]!.messages;
  t.same(
    second.slice(-2).map((m) => m.role),
    ['assistant', 'tool'],
  );
  t.equal((second.at(-1) as { content: string }).content, 'file contents');
  t.ok(
    a.asked[0]!.tools.some((x) => x.function.name === 'mcp_fs_read'),
    'MCP tools are offered',
  );
});

t.test('a failing model is reported, not thrown', async (t) => {
  const a = setup([], { inputs: [input(['hi'])], llm: { type: 'x', ask: async () => Promise.reject(new Error('503 upstream')) } });
  t.same(await runTick(a.deps, req, signal), { calledModel: true });
  t.ok(a.events.some((e) => e.type === 'model.error' && /503/.test(e.error)));
});
