// One tick: idle ticks skip the model, keyword transitions end the tick, tool calls reach actions, unknown tools are dropped, MCP rounds are bounded, a streamed answer reports its progress.
import t from 'tap';
import { BehaviorSubject, EMPTY } from 'rxjs';
import { pino } from 'pino';
import { runTick, type TickDeps, type TickInput } from '../../actors/cortex/tick.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import type { ActionHandle, McpHub } from '../../src/cortex/contracts.js';
import type { AnswerObserver, LlmAnswer, LlmRequest } from '../../src/cortex/llm.js';
import type { ActionConfig, AgentConfig, ModeConfig } from '../../src/config/schema.js';
import { toolsForMode } from '../../src/cortex/tools.js';
import { answerEvents } from '../../src/cloud/sse.js';
import { assemble } from '../../src/cortex/llm/stream.js';

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

/** An OpenAI-style event stream, one chunk per token: plain text, then an `emotion` call, then a `speak` call, each cut in 2-character pieces. */
function tokenStream(): { body: string; tokens: number } {
  const pieces = (text: string) => text.match(/[\s\S]{1,2}/g) ?? [];
  const chunk = (delta: unknown, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const out: string[] = [];
  for (const p of pieces('Hello there. I am ready. Let us go.')) out.push(chunk({ content: p }));
  const call = (index: number, name: string, args: string) => {
    out.push(chunk({ tool_calls: [{ index, id: `call_${index}`, type: 'function', function: { name, arguments: '' } }] }));
    for (const p of pieces(args)) out.push(chunk({ tool_calls: [{ index, function: { arguments: p } }] }));
  };
  call(0, 'emotion', '{"emotion":"happy"}');
  call(1, 'speak', '{"sentence":"One is here. Two is here. Three."}');
  const tokens = out.length;
  out.push(chunk({}, 'tool_calls'), 'data: [DONE]\n\n');
  return { body: out.join(''), tokens };
}

t.test(
  'a streamed answer reports its progress on the bus: the first token, then per sentence and per tool call (before its dispatch), never per token, without text',
  async (t) => {
    const { body, tokens } = tokenStream();
    const streamed = {
      type: 'fake',
      // The real reader and assembler over a real byte stream, one network piece per chunk.
      ask: async (_req: LlmRequest, sig: AbortSignal, observer?: AnswerObserver) => {
        const bytes = new TextEncoder().encode(body);
        const res = new Response(
          new ReadableStream({
            start(c) {
              for (let i = 0; i < bytes.length; i += 64) c.enqueue(bytes.slice(i, i + 64));
              c.close();
            },
          }),
          { headers: { 'content-type': 'text/event-stream' } },
        );
        return assemble(answerEvents(res, 'POST /x', sig), observer, 0, 'm');
      },
    };
    const a = setup([], { inputs: [input(['hi'])], llm: streamed });
    // What was on the bus when the emotion call was dispatched.
    const seenAtDispatch: string[] = [];
    const handles = a.deps.handles().map((h) =>
      h.entry.llm_label === 'emotion'
        ? {
            ...h,
            dispatch: (v: unknown) => {
              seenAtDispatch.push(...a.events.map((e) => (e.type === 'model.progress' ? e.stage : e.type)));
              h.dispatch(v, 'model');
            },
          }
        : h,
    );
    a.deps.handles = () => handles;
    await runTick(a.deps, req, signal);
    const progress = a.events.filter((e): e is Extract<AgentEvent, { type: 'model.progress' }> => e.type === 'model.progress');
    t.same(
      progress.map((e) => e.stage),
      ['first_token', 'sentence', 'sentence', 'tool_call', 'sentence', 'sentence', 'sentence'],
      'first token; two complete sentences of text; the emotion call; the three sentences of speak',
    );
    t.ok(tokens > 5 * progress.length, `${progress.length} progress events for ${tokens} tokens`);
    for (const e of progress) t.same(Object.keys(e).sort(), ['at', 'mode', 'stage', 'tick', 'type'], 'no text on a progress event');
    t.match(progress[0], { mode: 'm', tick: 4 });
    t.same(seenAtDispatch.slice(-2), ['sentence', 'tool_call'], 'the emotion call was reported before it was dispatched');
    const answerAt = a.events.findIndex((e) => e.type === 'model.answer');
    t.ok(answerAt > a.events.indexOf(progress.at(-1)!), 'all progress comes before the answer');
    t.same(a.dispatched, [
      ['emotion', { emotion: 'happy' }],
      ['speak', { sentence: 'One is here.' }],
      ['speak', { sentence: 'Two is here.' }],
      ['speak', { sentence: 'Three.' }],
    ]);
  },
);
