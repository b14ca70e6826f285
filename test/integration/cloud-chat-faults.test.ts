// Proves chat completions over real HTTP survive odd SSE splits, and that retries, aborts and mid-stream failures behave as the policy says.
import t from 'tap';
import { ChatClient } from '../../src/cloud/chat.js';
import { CloudHttp } from '../../src/cloud/http.js';
import type { RetryOptions } from '../../src/cloud/retry.js';
import { sendJson, sseText, startCloudPeer, writeInPieces, type CloudPeer } from '../support/cloud-peer.js';

const PATH = '/api/core/provider_a/chat/completions';
const KEY = 'key_test_abcdefghijklmnop';
const REQ = { model: 'gen-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }] };

const chunk = (delta: object, finish: string | null = null) => ({
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gen-4o-mini',
  choices: [{ index: 0, delta, finish_reason: finish }],
});
const EVENTS = [
  chunk({ role: 'assistant', content: 'Gr' }),
  chunk({ content: 'üße 👋' }),
  chunk({}, 'stop'),
  {
    id: 'c1',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'gen-4o-mini',
    choices: [],
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 },
  },
];
const COMPLETION = {
  id: 'c1',
  object: 'chat.completion',
  created: 1,
  model: 'gen-4o-mini',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};

let peer: CloudPeer;
t.before(async () => void (peer = await startCloudPeer()));
t.teardown(() => peer.close());

function client(retry: Partial<RetryOptions> = {}) {
  const waits: number[] = [];
  const http = new CloudHttp({
    baseUrl: peer.url,
    retry: { maxRetries: 3, baseDelayMs: 10, maxDelayMs: 40, maxRetryAfterMs: 10_000, sleep: async (ms) => void waits.push(ms), ...retry },
  });
  return { chat: new ChatClient({ http, apiKey: KEY }), waits };
}
const countOf = (path: string) => peer.requests.filter((r) => r.path === path).length;

t.test('SSE over HTTP with pieces cut mid-event and mid-character', async (t) => {
  const text = sseText(EVENTS);
  const emoji = Buffer.from(text.slice(0, text.indexOf('👋'))).length;
  for (const cuts of [[], [3, 7, 11], [emoji + 1, emoji + 3], Array.from({ length: 60 }, (_, i) => i * 9 + 1)]) {
    peer.once('POST', PATH, async (req, res) => {
      t.equal(req.headers.authorization, `Bearer ${KEY}`);
      t.equal(JSON.parse(req.body).stream, true);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      await writeInPieces(res, text, cuts);
      res.end();
    });
    const got = await (await client().chat.stream('provider_a', REQ)).collect();
    t.equal(got.content, 'Grüße 👋');
    t.equal(got.finishReason, 'stop');
    t.same(got.usage, { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 });
  }
});

t.test('429 with Retry-After is retried after the advised delay', async (t) => {
  const before = countOf(PATH);
  peer.once('POST', PATH, (_req, res) => sendJson(res, 429, { error: 'rate limited' }, { 'retry-after': '1' }));
  peer.once('POST', PATH, (_req, res) => sendJson(res, 200, COMPLETION));
  const c = client();
  const res = await c.chat.create('provider_a', REQ);
  t.equal(res.choices[0]?.message.content, 'hello');
  t.same(c.waits, [1000]);
  t.equal(countOf(PATH) - before, 2);
});

t.test('a real 50 ms Retry-After wait with the default timer', async (t) => {
  peer.once('POST', PATH, (_req, res) => sendJson(res, 429, { error: 'rate limited' }, { 'retry-after': '0.05' }));
  peer.once('POST', PATH, (_req, res) => sendJson(res, 200, COMPLETION));
  const http = new CloudHttp({ baseUrl: peer.url, retry: { maxRetries: 1, baseDelayMs: 10, maxDelayMs: 10, maxRetryAfterMs: 1000 } });
  const started = Date.now();
  await new ChatClient({ http, apiKey: KEY }).create('provider_a', REQ);
  t.ok(Date.now() - started >= 45, 'waited at least the advised time');
});

t.test('no retry on 400, 401, 403, 404, 500 or 503 key-not-configured', async (t) => {
  const rows: Array<[number, string]> = [
    [400, 'Invalid JSON'],
    [401, 'Unauthorized'],
    [403, 'forbidden'],
    [404, 'unsupported model provider: provider_a'],
    [500, 'upstream answered garbage'],
    [503, 'provider_a API key not configured'],
  ];
  for (const [status, error] of rows) {
    const before = countOf(PATH);
    peer.route('POST', PATH, (_req, res) => sendJson(res, status, { error }));
    const c = client();
    await t.rejects(c.chat.create('provider_a', REQ), { message: `${status}: ${error}`, status, serverMessage: error, endpoint: `POST ${PATH}` });
    await t.rejects(c.chat.stream('provider_a', REQ), { message: `${status}: ${error}`, status });
    t.equal(countOf(PATH) - before, 2, `${status}: one request per call`);
    t.same(c.waits, []);
  }
});

t.test('503 unreachable is retried up to the cap, then surfaced', async (t) => {
  const before = countOf(PATH);
  peer.route('POST', PATH, (_req, res) => sendJson(res, 503, { error: 'Failed to connect to provider_a server' }));
  const c = client();
  await t.rejects(c.chat.create('provider_a', REQ), { name: 'CloudUnavailableError', reason: 'unreachable' });
  t.equal(countOf(PATH) - before, 4);
  t.equal(c.waits.length, 3);
  t.ok(
    c.waits.every((w, i) => w <= Math.min(40, 10 * 2 ** i) && w >= Math.min(40, 10 * 2 ** i) / 2),
    `jittered capped waits ${c.waits}`,
  );
});

t.test('connection reset before any byte is retried', async (t) => {
  peer.once('POST', PATH, (_req, res) => void res.socket?.destroy());
  peer.once('POST', PATH, (_req, res) => sendJson(res, 200, COMPLETION));
  const c = client();
  const res = await c.chat.create('provider_a', REQ);
  t.equal(res.id, 'c1');
  t.equal(c.waits.length, 1);
});

t.test('a stream dropped after its first byte is not retried', async (t) => {
  const before = countOf(PATH);
  peer.route('POST', PATH, async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    await writeInPieces(res, sseText(EVENTS.slice(0, 2), false).slice(0, -10), []);
    res.socket?.destroy();
  });
  const c = client();
  const stream = await c.chat.stream('provider_a', REQ);
  const seen: string[] = [];
  await t.rejects(
    stream.collect((s) => seen.push(s)),
    { name: 'CloudStreamError' },
  );
  t.same(seen, ['Gr'], 'the complete first event was delivered');
  t.equal(countOf(PATH) - before, 1);
  t.same(c.waits, []);
});

t.test('abort mid-stream ends the iteration and closes the connection', async (t) => {
  let closed!: () => void;
  const serverSawClose = new Promise<void>((r) => (closed = r));
  peer.route('POST', PATH, async (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.on('close', () => closed());
    await writeInPieces(res, sseText(EVENTS.slice(0, 1), false), []);
    // then nothing more: the client must abort
  });
  const ac = new AbortController();
  const stream = await client().chat.stream('provider_a', REQ, { signal: ac.signal });
  const got: string[] = [];
  await t.rejects(
    (async () => {
      for await (const ev of stream) {
        if (ev.kind === 'delta' && ev.content) got.push(ev.content);
        ac.abort(new Error('operator stop'));
      }
    })(),
    { message: 'operator stop' },
  );
  t.same(got, ['Gr']);
  await serverSawClose;
  t.pass('server saw the connection close');
});

t.test('abort before the response ends the call without retry', async (t) => {
  const before = countOf(PATH);
  peer.route('POST', PATH, () => undefined); // never answers
  const ac = new AbortController();
  const pending = client().chat.create('provider_a', REQ, { signal: ac.signal });
  setImmediate(() => ac.abort(new Error('cancelled')));
  await t.rejects(pending, { message: 'cancelled' });
  t.ok(countOf(PATH) - before <= 1);
});

t.test('validation stops bad requests before anything is sent', async (t) => {
  const before = peer.requests.length;
  const c = client();
  await t.rejects(c.chat.create('provider_a', { ...REQ, temperature: 2.5 }), { name: 'CloudValidationError', message: /temperature/ });
  await t.rejects(c.chat.create('provider_a', { ...REQ, presence_penalty: -3 }), { name: 'CloudValidationError' });
  await t.rejects(c.chat.create('provider_a', { ...REQ, model: 'twin-2.5-pro' }), { message: /unsupported model: twin-2.5-pro/ });
  await t.rejects(c.chat.create('provider_z', REQ), { message: /unsupported model provider: provider_z/ });
  t.equal(peer.requests.length, before);
});
