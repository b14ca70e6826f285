// Proves LocalLLM, CloudLLM and MultiLLM against real HTTP peers: tool calls, keys, timeouts that abort, history, races and fallbacks.
import Fastify, { type FastifyInstance } from 'fastify';
import t from 'tap';
import { pino } from 'pino';
import { createCloudClient } from '../../src/cloud/client.js';
import type { ResolvedAddresses } from '../../src/cloud/addresses.js';
import { NO_RETRY } from '../../src/cloud/retry.js';
import type { ChatMessage, ToolDefinition } from '../../src/cloud/protocol.js';
import { startService, type RunningService } from '../../src/service/index.js';
import { builtinPlugins, resolvePlugins, type Plugins } from '../../actors/plugin-registry.js';
import type { LlmContext, LlmPlugin } from '../../src/cortex/llm.js';
import type { ChatLlm } from '../../src/cortex/llm/chat-plugin.js';
import { SUMMARY_INSTRUCTION } from '../../src/cortex/history.js';
import { toolsForMode } from '../../src/cortex/tools.js';

interface Seen {
  auth: string | undefined;
  body: { model: string; messages: ChatMessage[]; tools?: ToolDefinition[] };
  closedEarly: boolean;
}
type Reply = { content?: string | null; tool_calls?: Array<{ name: string; arguments: string }> } | 'hang' | { status: number; error: string };

/** A minimal OpenAI-compatible server at /v1/chat/completions answering from `reply` and recording requests. */
async function peer(reply: (body: Seen['body'], n: number) => Reply): Promise<{ url: string; seen: Seen[]; app: FastifyInstance; aborted: Promise<void> }> {
  const app = Fastify({ forceCloseConnections: true });
  const seen: Seen[] = [];
  let markAborted!: () => void;
  const aborted = new Promise<void>((r) => (markAborted = r));
  app.post('/v1/chat/completions', async (req, res) => {
    const entry: Seen = { auth: req.headers.authorization, body: req.body as Seen['body'], closedEarly: false };
    seen.push(entry);
    const r = reply(entry.body, seen.length);
    if (r === 'hang') {
      await new Promise<void>((resolve) => req.raw.socket.once('close', () => resolve()));
      entry.closedEarly = true;
      markAborted();
      return res;
    }
    if ('status' in r) return res.code(r.status).send({ error: r.error });
    return {
      model: entry.body.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: r.content ?? null,
            ...(r.tool_calls ? { tool_calls: r.tool_calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: c })) } : {}),
          },
          finish_reason: 'stop',
        },
      ],
    };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const { port } = app.server.address() as { port: number };
  t.teardown(() => app.close());
  return { url: `http://127.0.0.1:${port}/v1`, seen, app, aborted };
}

const logger = pino({ level: 'silent' });
let svc: RunningService;
let key: string;
let ctx: LlmContext;
let plugins: Plugins;
t.before(async () => {
  svc = await startService({ dbPath: ':memory:', jwtSecret: 's'.repeat(32), logger });
  key = svc.admin.createApiKey('robot').apiKey;
  const addresses = { base_url: svc.url, ws_base_url: svc.wsUrl, asr_ws_url: svc.asrWsUrl, vlm_ws_url: svc.vlmWsUrl } as ResolvedAddresses;
  ctx = { logger, cloud: createCloudClient({ addresses, apiKey: key, retry: NO_RETRY }) };
  // The three model plugins, loaded through the registry as an agent loads them.
  plugins = await resolvePlugins(builtinPlugins, {
    modes: Object.fromEntries(
      ['CloudLLM', 'LocalLLM', 'MultiLLM'].map((type) => [type, { agent_inputs: [], agent_actions: [], simulators: [], cortex_llm: { type } }]),
    ),
  });
});
t.teardown(() => svc.close());

const make = (type: string, config: unknown) => plugins.llm(type).create(config, ctx) as ChatLlm;
const tools = toolsForMode(
  [
    { name: 'speak', llm_label: 'speak', connector: 'console', implementation: 'passthrough', config: {}, exclude_from_prompt: false },
    { name: 'move', llm_label: 'move', connector: 'console', implementation: 'passthrough', config: {}, exclude_from_prompt: false },
  ],
  [],
);
const req = (prompt: string, withTools = true) => ({
  messages: [
    { role: 'system' as const, content: 'You are a dog.' },
    { role: 'user' as const, content: prompt },
  ],
  tools: withTools ? tools : [],
});
const never = () => new AbortController().signal;

t.test('LocalLLM: posts to base_url/chat/completions without a key, parses tool calls', async (t) => {
  const p = await peer(() => ({ content: 'woof', tool_calls: [{ name: 'move', arguments: '{"action":"sit"}' }] }));
  const llm = make('LocalLLM', { base_url: p.url, model: 'qwen2.5' });
  const answer = await llm.ask(req('sit!'), never());
  t.equal(answer.text, 'woof');
  t.same(answer.toolCalls, [{ id: 'call_0', name: 'move', arguments: { action: 'sit' } }]);
  t.equal(answer.model, 'qwen2.5');
  t.equal(p.seen[0]!.auth, undefined, 'no Authorization header without api_key');
  t.same(
    p.seen[0]!.body.tools!.map((x) => x.function.name),
    ['speak', 'move'],
  );
  const keyed = make('LocalLLM', { base_url: p.url, api_key: 'sk-local-123' });
  await keyed.ask(req('again'), never());
  t.equal(p.seen[1]!.auth, 'Bearer sk-local-123');
});

t.test('LocalLLM against the local service provider path (the same API shape)', async (t) => {
  const llm = make('LocalLLM', { base_url: `${svc.url}/api/core/provider_a`, api_key: key, model: 'gen-4o-mini' });
  const answer = await llm.ask(req('Voice: "please turn left"'), never());
  t.same(answer.toolCalls.find((c) => c.name === 'move')?.arguments, { action: 'turn left' });
});

t.test('CloudLLM through the cloud client against the local service', async (t) => {
  const llm = make('CloudLLM', { provider: 'provider_a', model: 'gen-4o-mini' });
  const answer = await llm.ask(req('Voice: "turn right"'), never());
  t.same(answer.toolCalls.find((c) => c.name === 'move')?.arguments, { action: 'turn right' });
  t.ok(answer.usage && answer.usage.total_tokens > 0);
});

t.test('a call that exceeds timeout_seconds is aborted: the peer sees the connection close', async (t) => {
  const p = await peer(() => 'hang');
  const llm = make('LocalLLM', { base_url: p.url, timeout_seconds: 0.2, retry: false });
  await t.rejects(llm.ask(req('hello'), never()), { name: 'LlmTimeoutError', message: /no answer within 0.2 s/ });
  await p.aborted;
  t.ok(p.seen[0]!.closedEarly);
});

t.test("the owner's signal aborts a call", async (t) => {
  const p = await peer(() => 'hang');
  const llm = make('LocalLLM', { base_url: p.url, retry: false });
  const ac = new AbortController();
  const asking = llm.ask(req('hello'), ac.signal);
  setImmediate(() => ac.abort(new Error('mode exit')));
  await t.rejects(asking, { message: 'mode exit' });
  await p.aborted;
});

t.test('history: past exchanges are sent, older ones summarised by the same model', async (t) => {
  const p = await peer((body) => {
    const sys = body.messages[0]!.content;
    if (sys === SUMMARY_INSTRUCTION) return { content: 'They asked the dog to sit and to roll.' };
    return { content: `ok ${body.messages.at(-1)!.content}` };
  });
  const llm = make('LocalLLM', { base_url: p.url, history_length: 1 });
  await llm.ask(req('sit'), never());
  await llm.ask(req('roll'), never());
  t.same(
    p.seen[1]!.body.messages.map((m) => `${m.role}:${m.content}`),
    ['system:You are a dog.', 'user:sit', 'assistant:ok sit', 'user:roll'],
  );
  await llm.ask(req('beg'), never()); // 'sit' leaves the window -> summary in the background
  await llm.history!.idle();
  t.equal(llm.history!.summary, 'They asked the dog to sit and to roll.');
  const summaryCall = p.seen.find((s) => s.body.messages[0]!.content === SUMMARY_INSTRUCTION)!;
  t.match(summaryCall.body.messages[1]!.content, /Prompt: sit\nRobot: ok sit/);
  t.notOk(summaryCall.body.tools, 'summaries are asked without tools');
  await llm.ask(req('stay'), never());
  t.same(
    p.seen.at(-1)!.body.messages.map((m) => `${m.role}:${m.content}`),
    [
      'system:You are a dog.',
      'system:Summary of the earlier conversation: They asked the dog to sit and to roll.',
      'user:beg',
      'assistant:ok beg',
      'user:stay',
    ],
  );
  llm.stop();
});

t.test('history: a failing summary truncates instead', async (t) => {
  const p = await peer((body) => (body.messages[0]!.content === SUMMARY_INSTRUCTION ? { status: 500, error: 'no' } : { content: 'fine' }));
  const llm = make('LocalLLM', { base_url: p.url, history_length: 1, retry: false });
  await llm.ask(req('a'), never());
  await llm.ask(req('b'), never());
  await llm.history!.idle();
  t.equal(llm.history!.summary, '');
  t.equal(llm.history!.dropped, 1);
  await llm.ask(req('c'), never());
  await llm.history!.idle();
  t.same(
    p.seen
      .filter((x) => x.body.messages[0]!.content !== SUMMARY_INSTRUCTION)
      .at(-1)!
      .body.messages.map((m) => m.content),
    ['You are a dog.', 'b', 'fine', 'c'],
  );
});

t.test('MultiLLM first_valid: the fast valid answer wins and the slow call is aborted', async (t) => {
  const slow = await peer(() => 'hang');
  const invalid = await peer(() => ({ tool_calls: [{ name: 'fly', arguments: '{}' }] }));
  const fast = await peer(() => ({ tool_calls: [{ name: 'move', arguments: '{"action":"dance"}' }] }));
  const llm: LlmPlugin = make('MultiLLM', {
    strategy: 'first_valid',
    timeout_seconds: 5,
    models: [
      { type: 'LocalLLM', config: { base_url: slow.url, model: 'slow', retry: false } },
      { type: 'LocalLLM', config: { base_url: invalid.url, model: 'invalid' } },
      { type: 'LocalLLM', config: { base_url: fast.url, model: 'fast' } },
    ],
  });
  const answer = await llm.ask(req('dance'), never());
  t.equal(answer.model, 'fast');
  await slow.aborted;
  t.ok(slow.seen[0]!.closedEarly, 'the losing call was aborted');
});

t.test('MultiLLM fallback: in order, past failures, timeouts and invalid answers; all failing names each', async (t) => {
  const broken = await peer(() => ({ status: 500, error: 'model crashed' }));
  const slow = await peer(() => 'hang');
  const empty = await peer(() => ({ content: '' }));
  const good = await peer(() => ({ content: 'hello' }));
  const models = (last: string) => [
    { type: 'LocalLLM', config: { base_url: broken.url, model: 'broken', retry: false } },
    { type: 'LocalLLM', config: { base_url: slow.url, model: 'slow', retry: false }, timeout_seconds: 0.2 },
    { type: 'LocalLLM', config: { base_url: empty.url, model: 'empty' } },
    { type: 'LocalLLM', config: { base_url: last, model: 'last' } },
  ];
  const llm = make('MultiLLM', { strategy: 'fallback', models: models(good.url) });
  const answer = await llm.ask(req('hi'), never());
  t.equal(answer.text, 'hello');
  t.same([broken.seen.length, slow.seen.length, empty.seen.length, good.seen.length], [1, 1, 1, 1]);
  const none = make('MultiLLM', { strategy: 'fallback', models: models(empty.url) });
  const err = (await none.ask(req('hi'), never()).catch((e: unknown) => e)) as Error & { failures?: string[] };
  t.equal(err.name, 'MultiLlmError');
  t.match(err.failures, [/broken: .*model crashed/, /slow: .*no answer within 0.2 s/, /empty: empty answer/, /last: empty answer/]);
});

t.test('MultiLLM: when every member answers and none has anything to say, the answer is empty, not a failure', async (t) => {
  const quiet = await peer(() => ({ content: '' }));
  const alsoQuiet = await peer(() => ({ content: '  ' }));
  const broken = await peer(() => ({ status: 500, error: 'model crashed' }));
  for (const strategy of ['fallback', 'first_valid']) {
    const llm = make('MultiLLM', {
      strategy,
      models: [
        { type: 'LocalLLM', config: { base_url: quiet.url, model: 'quiet' } },
        { type: 'LocalLLM', config: { base_url: alsoQuiet.url, model: 'also-quiet' } },
      ],
    });
    const answer = await llm.ask(req('nothing happens'), never());
    t.same(answer.toolCalls, [], `${strategy}: no tool call`);
    t.notOk(answer.text?.trim(), `${strategy}: nothing said`);
    const mixed = make('MultiLLM', {
      strategy,
      models: [
        { type: 'LocalLLM', config: { base_url: quiet.url, model: 'quiet' } },
        { type: 'LocalLLM', config: { base_url: broken.url, model: 'broken', retry: false } },
      ],
    });
    const err = (await mixed.ask(req('nothing happens'), never()).catch((e: unknown) => e)) as Error;
    t.equal(err.name, 'MultiLlmError', `${strategy}: a member that failed keeps it a failure`);
  }
});

t.test('config schemas refuse bad blocks with clear paths', async (t) => {
  const local = plugins.llm('LocalLLM').schema.safeParse({ base_url: 'ftp://x' });
  t.notOk(local.success);
  const multi = plugins.llm('MultiLLM').schema.safeParse({ models: [{ type: 'CloudLLM', config: { provider: 'provider_a', model: 'nope' } }] });
  t.notOk(multi.success);
  t.match(JSON.stringify(multi.error?.issues), /models.*model/);
  t.notOk(plugins.llm('MultiLLM').schema.safeParse({ models: [] }).success);
});
