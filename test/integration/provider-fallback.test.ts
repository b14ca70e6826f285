// Proves a model never goes dead on a stream shape: unreadable streams are asked again whole and streaming is switched off once, a failing model is reported, thought signatures go back, LocalLLM fits its context window and answers in JSON where tools are refused.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import type { ResolvedAddresses } from '../../src/cloud/addresses.js';
import { createCloudClient } from '../../src/cloud/client.js';
import { NO_RETRY } from '../../src/cloud/retry.js';
import type { ChatMessage } from '../../src/cloud/protocol.js';
import type { LlmPlugin, ModelHealthReport } from '../../src/cortex/llm.js';
import { createCloudLlm } from '../../src/cortex/llm/cloud-llm.js';
import { createLocalLlm } from '../../src/cortex/llm/local-llm.js';
import { FAILING_AFTER } from '../../src/cortex/llm/model-health.js';
import { toolsForMode } from '../../src/cortex/tools.js';
import type { ActionConfig } from '../../src/config/schema.js';
import { loadFixtures, startReplayServer, type ProviderFixture, type ReplayServer } from '../support/provider-replay.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const corpus = new Map(loadFixtures().map((f) => [f.name, f]));
let replay: ReplayServer;
t.before(async () => {
  replay = await startReplayServer();
});
t.teardown(() => replay.close());

function capture() {
  const lines: string[] = [];
  const logger = pino(
    { level: 'warn' },
    new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    }),
  );
  return { lines, logger };
}

const tools = toolsForMode(
  ['speak', 'move'].map(
    (n) => ({ name: n, llm_label: n, connector: 'console', implementation: 'passthrough', config: {}, exclude_from_prompt: false }) as ActionConfig,
  ),
  [],
);
const req = (prompt: string, extra: ChatMessage[] = []) => ({
  messages: [{ role: 'system' as const, content: 'You are a robot.' }, { role: 'user' as const, content: prompt }, ...extra],
  tools,
});
const never = () => new AbortController().signal;

/** A stream no rule can read: a tool call whose arguments arrive but whose name never does. */
const broken: ProviderFixture = {
  ...corpus.get('openai-parallel-tools')!,
  name: 'broken',
  bytes: Buffer.from(
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\\"action\\":\\"turn left\\"}"}}]}}]}\n\ndata: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\ndata: [DONE]\n\n',
  ),
};

function local(reports: ModelHealthReport[], logger: pino.Logger, extra: Record<string, unknown> = {}): LlmPlugin {
  return createLocalLlm(
    { base_url: `${replay.url}/v1`, model: 'm', retry: false, history_length: 0, context_tokens: 8192, ...extra },
    {
      logger,
      cloud: undefined as never,
      report: (r) => reports.push(r),
    },
  );
}

t.test('an unreadable stream is asked again whole, and streaming stays off for the session with one warning', async (t) => {
  for (const kind of ['local', 'cloud'] as const) {
    const { lines, logger } = capture();
    const reports: ModelHealthReport[] = [];
    const cloud = createCloudClient({
      addresses: { base_url: replay.url, ws_base_url: replay.url, asr_ws_url: replay.url, vlm_ws_url: replay.url } as ResolvedAddresses,
      apiKey: 'om1_k',
      retry: NO_RETRY,
    });
    const llm =
      kind === 'local'
        ? local(reports, logger)
        : createCloudLlm({ provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 }, { logger, cloud, report: (r) => reports.push(r) });
    replay.serve(broken);
    const from = replay.requests.length;
    const answer = await llm.ask(req('turn left'), never());
    t.same(
      answer.toolCalls.map((c) => [c.name, c.arguments]),
      [
        ['move', { action: 'turn left' }],
        ['speak', { sentence: 'Turning left now.' }],
      ],
      `${kind}: the whole answer`,
    );
    t.same(
      replay.requests.slice(from).map((r) => r.stream),
      [true, false],
      `${kind}: streamed, then asked whole`,
    );
    await llm.ask(req('again'), never());
    t.same(
      replay.requests.slice(from).map((r) => r.stream),
      [true, false, false],
      `${kind}: not streamed any more`,
    );
    t.same(
      reports.map((r) => r.state),
      ['streaming_off'],
      `${kind}: one report`,
    );
    t.match(reports[0]!.reason, /never a name/);
    const warnings = lines.filter((l) => /cannot be read/.test(l));
    t.equal(warnings.length, 1, `${kind}: one warning`);
    t.match(warnings[0], /never a name/, 'the warning says why');
  }
});

t.test('a model that keeps failing is reported failing once, and healthy when it answers again', async (t) => {
  const { logger } = capture();
  const reports: ModelHealthReport[] = [];
  const llm = local(reports, logger);
  replay.serve(corpus.get('llamacpp-200-error-body')!);
  for (let i = 0; i < FAILING_AFTER + 1; i++)
    await t.rejects(llm.ask(req('hello'), never()), { name: 'ModelProviderError', message: /Cannot use tools with stream/ });
  t.same(
    reports.map((r) => [r.state, r.failures]),
    [['failing', FAILING_AFTER]],
  );
  t.match(reports[0]!.reason, /Cannot use tools with stream/);
  replay.serve(corpus.get('openai-text')!);
  await llm.ask(req('hello'), never());
  t.same(
    reports.map((r) => r.state),
    ['failing', 'healthy'],
  );
});

t.test("Gemini's thought signature goes back with its tool call in the next request", async (t) => {
  const { logger } = capture();
  const llm = local([], logger);
  replay.serve(corpus.get('gemini-tool-indexless')!);
  const answer = await llm.ask(req('turn left'), never());
  const call = answer.toolCalls[0]!;
  t.same(call.extra, { google: { thought_signature: 'CtIBAVSoXO7bZ1k3Lq2rVx0xYQ==' } });
  // The next round, as the tick builds it: the call (without the metadata) and its result.
  const followUp: ChatMessage[] = [
    {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: call.id!, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } }],
    },
    { role: 'tool', tool_call_id: call.id!, content: 'turned' },
  ];
  replay.serve(corpus.get('openai-text')!);
  await llm.ask(req('turn left', followUp), never());
  const sent = replay.requests.at(-1)!.body.messages as Array<{ role: string; tool_calls?: Array<{ extra_content?: unknown }> }>;
  t.same(sent.find((m) => m.role === 'assistant')?.tool_calls?.[0]?.extra_content, call.extra, 'sent back as the provider requires');
});

/** A tiny server that speaks like one local model server: its own info endpoint, and chat answers from `answer`. */
async function localServer(
  info: { path: string; method: string; body: unknown },
  answer: (body: Record<string, unknown>) => { status: number; json: unknown },
) {
  const bodies: Array<Record<string, unknown>> = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      if (req.url === info.path && req.method === info.method)
        return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(info.body));
      if (req.url === '/v1/chat/completions') {
        const body = JSON.parse(raw) as Record<string, unknown>;
        bodies.push(body);
        const a = answer(body);
        return void res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.json));
      }
      res.writeHead(404).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bodies };
}

const completion = (content: string | null, calls?: unknown[]) => ({
  model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content, ...(calls ? { tool_calls: calls } : {}) }, finish_reason: 'stop' }],
});

t.test('LocalLLM reads the context window from the server and leaves out the oldest history that does not fit', async (t) => {
  const servers = [
    { name: 'llama-server', info: { path: '/props', method: 'GET', body: { default_generation_settings: { n_ctx: 512 } } } },
    { name: 'vLLM', info: { path: '/v1/models', method: 'GET', body: { object: 'list', data: [{ id: 'm', max_model_len: 512 }] } } },
    {
      name: 'Ollama',
      info: { path: '/api/show', method: 'POST', body: { parameters: 'num_ctx                        512', model_info: { 'qwen2.context_length': 32768 } } },
    },
  ];
  for (const s of servers) {
    const { lines, logger } = capture();
    const srv = await localServer(s.info, () => ({ status: 200, json: completion('ok') }));
    const llm = createLocalLlm(
      { base_url: srv.base, model: 'm', stream: false, retry: false, history_length: 20 },
      {
        logger: pino(
          { level: 'info' },
          new Writable({
            write(c, _e, cb) {
              lines.push(String(c));
              cb();
            },
          }),
        ),
        cloud: undefined as never,
      },
    );
    // Each exchange is about 100 tokens; 20 of them cannot fit in 512 (a quarter kept for the answer).
    const long = 'x'.repeat(330);
    for (let i = 0; i < 20; i++) await llm.ask(req(`${i} ${long}`), never());
    t.ok(
      lines.some((l) => /context window 512 tokens/.test(l)),
      `${s.name}: the window was read`,
    );
    const last = srv.bodies.at(-1)!.messages as ChatMessage[];
    t.ok(last.length < 2 + 2 * 19, `${s.name}: old history left out (${last.length} messages sent)`);
    t.equal(last[0]!.role, 'system', `${s.name}: the system message stays`);
    t.match(last.at(-1)!.content, /^19 /, `${s.name}: the new prompt stays`);
    t.match(last.at(-2)!.content, /^ok/, `${s.name}: the newest exchange stays`);
    void logger;
  }
});

t.test('LocalLLM asks for a schema-constrained JSON answer when the server refuses tools', async (t) => {
  const srv = await localServer({ path: '/props', method: 'GET', body: { default_generation_settings: { n_ctx: 4096 } } }, (body) =>
    body.tools
      ? { status: 500, json: { error: { code: 500, message: 'tools param requires --jinja flag', type: 'server_error' } } }
      : { status: 200, json: completion(JSON.stringify({ say: 'Turning.', calls: [{ name: 'move', arguments: { action: 'turn left' } }] })) },
  );
  const { lines, logger } = capture();
  const llm = createLocalLlm({ base_url: srv.base, model: 'm', retry: false, history_length: 0 }, { logger, cloud: undefined as never });
  const answer = await llm.ask(req('turn left'), never());
  t.equal(answer.text, 'Turning.');
  t.same(
    answer.toolCalls.map((c) => [c.name, c.arguments]),
    [['move', { action: 'turn left' }]],
  );
  const asked = srv.bodies.at(-1)!;
  t.notOk(asked.tools, 'no tools sent in JSON mode');
  t.equal((asked.response_format as { type: string }).type, 'json_schema');
  t.match(JSON.stringify(asked.response_format), /"const":"move"/, 'the schema names the tools');
  t.equal(lines.filter((l) => /refused tool calling/.test(l)).length, 1, 'one warning');
  await llm.ask(req('again'), never());
  t.equal(srv.bodies.length, 3, 'the next call goes straight to JSON');
});
