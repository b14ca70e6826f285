// Proves the typed chat client and the real `openai` npm client both work against the local service, and every chat error row arrives typed.
import OpenAI from 'openai';
import t from 'tap';
import { ChatClient, checkModel } from '../../src/cloud/chat.js';
import { httpErrorFrom } from '../../src/cloud/errors.js';
import { CloudHttp } from '../../src/cloud/http.js';
import type { RetryOptions } from '../../src/cloud/retry.js';
import { startService, type RunningService } from '../../src/service/index.js';

let svc: RunningService;
let key: string;
t.before(async () => {
  svc = await startService({
    dbPath: ':memory:',
    jwtSecret: 's'.repeat(32),
    backends: {
      chat: {
        provider_b: { kind: 'upstream', baseUrl: 'http://127.0.0.1:9/v1' }, // no key: 503 not configured
        provider_d: { kind: 'upstream', baseUrl: 'http://127.0.0.1:9/v1', apiKey: 'sk-upstreamsecret123456' }, // port 9: refused
      },
    },
  });
  key = svc.admin.createApiKey('robot').apiKey;
});
t.teardown(() => svc.close());

function chat(opts: { apiKey?: string; catalogCheck?: boolean; retries?: number[] } = {}) {
  const retry: RetryOptions = {
    maxRetries: 2,
    baseDelayMs: 5,
    maxDelayMs: 10,
    maxRetryAfterMs: 1000,
    sleep: async () => undefined,
    onRetry: ({ delayMs }) => void opts.retries?.push(delayMs),
  };
  const http = new CloudHttp({ baseUrl: svc.url, retry });
  return new ChatClient({ http, apiKey: opts.apiKey ?? key, catalogCheck: opts.catalogCheck ?? true });
}

const MOVE_TOOL = {
  type: 'function' as const,
  function: {
    name: 'move',
    description: 'move the robot',
    parameters: { type: 'object', properties: { action: { type: 'string', enum: ['turn left', 'turn right', 'stand still'] } }, required: ['action'] },
  },
};

t.test('typed client: whole completion with usage', async (t) => {
  const res = await chat().create('provider_a', { model: 'gen-4o-mini', messages: [{ role: 'user', content: 'hello' }], temperature: 0.2 });
  t.equal(res.object, 'chat.completion');
  t.equal(res.model, 'gen-4o-mini');
  t.type(res.choices[0]?.message.content, 'string');
  t.ok((res.choices[0]?.message.content ?? '').length > 0);
  t.ok(res.usage.total_tokens > 0);
  t.equal(res.usage.total_tokens, res.usage.prompt_tokens + res.usage.completion_tokens);
});

t.test('typed client: stream of deltas with usage last, same text as non-streamed', async (t) => {
  const req = { model: 'gen-4o', messages: [{ role: 'user' as const, content: 'hello' }] };
  const whole = await chat().create('provider_a', req);
  const stream = await chat().stream('provider_a', req);
  const pieces: string[] = [];
  const got = await stream.collect((s) => pieces.push(s));
  t.ok(pieces.length > 1, 'more than one delta');
  t.equal(got.content, whole.choices[0]?.message.content);
  t.equal(got.finishReason, 'stop');
  t.ok(got.usage && got.usage.completion_tokens > 0);
});

t.test('tools: a tool call comes back, whole and streamed', async (t) => {
  const req = { model: 'gen-5', messages: [{ role: 'user' as const, content: 'Voice: turn left please' }], tools: [MOVE_TOOL] };
  const res = await chat().create('provider_a', req);
  const call = res.choices[0]?.message.tool_calls?.[0];
  t.equal(res.choices[0]?.finish_reason, 'tool_calls');
  t.equal(call?.function.name, 'move');
  t.same(JSON.parse(call?.function.arguments ?? '{}'), { action: 'turn left' });
  const streamed = await (await chat().stream('provider_a', req)).collect();
  t.equal(streamed.toolCalls[0]?.function.name, 'move');
  t.same(JSON.parse(streamed.toolCalls[0]?.function.arguments ?? '{}'), { action: 'turn left' });
  t.equal(streamed.finishReason, 'tool_calls');
  // the tool result goes back as a `tool` message and the conversation continues
  const next = await chat().create('provider_a', {
    ...req,
    messages: [
      ...req.messages,
      { role: 'assistant', content: null, tool_calls: res.choices[0]!.message.tool_calls! },
      { role: 'tool', content: 'turned', tool_call_id: call!.id },
    ],
  });
  t.equal(next.object, 'chat.completion');
});

t.test('error rows of chat completions, typed', async (t) => {
  const msgs = [{ role: 'user' as const, content: 'hi' }];
  await t.rejects(chat({ apiKey: 'key_live_notarealkey000' }).create('provider_a', { model: 'gen-4o', messages: msgs }), {
    name: 'CloudAuthError',
    status: 401,
  });
  await t.rejects(chat({ catalogCheck: false }).create('provider_q', { model: 'gen-4o', messages: msgs }), {
    name: 'CloudNotFoundError',
    message: '404: unsupported model provider: provider_q',
  });
  const expected = checkModel('provider_a', 'gk-4');
  await t.rejects(chat({ catalogCheck: false }).create('provider_a', { model: 'gk-4', messages: msgs }), {
    name: 'CloudNotFoundError',
    message: `404: ${expected}`,
  });
  await t.rejects(chat().create('provider_b', { model: 'deep-chat', messages: msgs }), {
    name: 'CloudUnavailableError',
    message: '503: provider_b API key not configured',
    reason: 'key_not_configured',
  });
  const retries: number[] = [];
  await t.rejects(chat({ retries }).create('provider_d', { model: 'gk-4', messages: msgs }), {
    name: 'CloudUnavailableError',
    message: '503: Failed to connect to provider_d server',
    reason: 'unreachable',
  });
  t.equal(retries.length, 2, 'unreachable retried up to the cap');
  // The client never sends invalid JSON; the row is still mapped to the typed 400 when a body is broken.
  const raw = await fetch(`${svc.url}/api/core/provider_a/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: '{"model":',
  });
  const err = httpErrorFrom(raw.status, 'POST /api/core/provider_a/chat/completions', await raw.text());
  t.equal(err.name, 'CloudBadRequestError');
  t.equal(err.message, '400: Invalid JSON');
});

t.test('the openai npm client is a second, independent client of the same endpoint', async (t) => {
  const openai = new OpenAI({ apiKey: key, baseURL: `${svc.url}/api/core/provider_a`, maxRetries: 0 });
  const res = await openai.chat.completions.create({ model: 'gen-4o', messages: [{ role: 'user', content: 'hello' }] });
  t.equal(res.object, 'chat.completion');
  t.ok(res.choices[0]?.message.content);
  t.ok(res.usage && res.usage.total_tokens > 0);

  const stream = await openai.chat.completions.create({
    model: 'gen-4o',
    messages: [{ role: 'user', content: 'hello' }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let usage: OpenAI.CompletionUsage | undefined | null;
  for await (const c of stream) {
    text += c.choices[0]?.delta.content ?? '';
    if (c.usage) usage = c.usage;
  }
  t.equal(text, res.choices[0]?.message.content);
  t.ok(usage && usage.completion_tokens > 0);

  const tools = await openai.chat.completions.create({ model: 'gen-4o', messages: [{ role: 'user', content: 'Voice: turn right' }], tools: [MOVE_TOOL] });
  const tc = tools.choices[0]?.message.tool_calls?.[0];
  t.equal(tc?.type, 'function');
  t.same(tc?.type === 'function' ? JSON.parse(tc.function.arguments) : undefined, { action: 'turn right' });

  await t.rejects(openai.chat.completions.create({ model: 'nope', messages: [{ role: 'user', content: 'x' }] }), { status: 404, message: /unsupported model/ });
  const bad = new OpenAI({ apiKey: 'key_live_wrong000000', baseURL: `${svc.url}/api/core/provider_a`, maxRetries: 0 });
  await t.rejects(bad.chat.completions.create({ model: 'gen-4o', messages: [{ role: 'user', content: 'x' }] }), { status: 401, message: /401/ });
});
