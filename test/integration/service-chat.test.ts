// Proves the chat endpoint of `cortexd cloud`: every error row, upstream forwarding and SSE passthrough, exact metering, balance refusal.
import t from 'tap';
import { createServer } from 'node:net';
import { pino } from 'pino';
import { startService, type RunningService } from '../../src/service/index.js';
import { startScriptedUpstream } from '../support/scripted-upstream.js';

const silent = pino({ level: 'silent' });

async function freePortThenClosed(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function chat(svc: RunningService, provider: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${svc.url}/api/core/${provider}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const hello = { model: 'gen-4o', messages: [{ role: 'user', content: 'hello' }] };

t.test('chat completions', async (t) => {
  // The shared scripted model: a plain answer, at once, with the usage this test sets.
  let usage = { prompt_tokens: 1000, completion_tokens: 2000, total_tokens: 3000 };
  const upstream = await startScriptedUpstream({
    firstTokenMs: 0,
    tokensPerSecond: 1000,
    answer: (body) => ({ text: body.stream ? 'Upstream' : 'Upstream says hi' }),
    usage: () => usage,
  });
  const deadPort = await freePortThenClosed();
  const svc = await startService({
    dbPath: ':memory:',
    jwtSecret: 's'.repeat(40),
    logger: silent,
    backends: {
      chat: {
        provider_a: { kind: 'upstream', baseUrl: upstream.baseUrl, apiKey: 'sk-upstream-secret' },
        provider_b: { kind: 'upstream', baseUrl: upstream.baseUrl },
        provider_d: { kind: 'upstream', baseUrl: `http://127.0.0.1:${deadPort}/v1`, apiKey: 'k' },
      },
    },
  });
  t.teardown(async () => {
    await svc.close();
    await upstream.close();
  });
  const { apiKey, info } = svc.admin.createApiKey('alice');
  const auth = { authorization: `Bearer ${apiKey}` };

  t.test('error rows', async (t) => {
    const expect = async (res: Response, status: number, error: string | RegExp) => {
      t.equal(res.status, status);
      const body = await res.json();
      if (typeof error === 'string') t.same(body, { error });
      else t.match(body, { error });
    };
    await expect(await chat(svc, 'provider_a', hello), 401, 'Missing API key. Send Authorization: Bearer <API_KEY> or x-api-key: <API_KEY>');
    await expect(await chat(svc, 'provider_a', hello, { authorization: 'Bearer key_live_wrong' }), 401, 'Invalid API key: malformed key');
    await expect(
      await chat(svc, 'provider_a', hello, { authorization: 'Bearer sk-other' }),
      401,
      'Invalid API key: key must start with key_live_ or key_test_',
    );
    await expect(await chat(svc, 'provider_a', '{"model": ', auth), 400, 'Invalid JSON');
    await expect(await chat(svc, 'provider_z', hello, auth), 404, 'unsupported model provider: provider_z');
    await expect(
      await chat(svc, 'provider_b', { ...hello, model: 'gen-4o' }, auth),
      404,
      'unsupported model: gen-4o. Supported model prefixes for provider_b: [deep-chat]',
    );
    await expect(
      await chat(svc, 'provider_d', { ...hello, model: 'gx-1' }, auth),
      404,
      'unsupported model: gx-1. Supported model prefixes for provider_d: [gk-2-latest, gk-3-beta, gk-4-latest, gk-4]',
    );
    await expect(await chat(svc, 'provider_a', { ...hello, temperature: 2.5 }, auth), 400, /^Invalid request: temperature: /);
    await expect(await chat(svc, 'provider_a', { ...hello, frequency_penalty: -3 }, auth), 400, /^Invalid request: frequency_penalty/);
    await expect(await chat(svc, 'provider_a', { model: 'gen-4o' }, auth), 400, /^Invalid request: messages/);
    await expect(await chat(svc, 'provider_b', { ...hello, model: 'deep-chat' }, auth), 503, 'provider_b API key not configured');
    await expect(await chat(svc, 'provider_d', { ...hello, model: 'gk-4' }, auth), 503, 'Failed to connect to provider_d server');
    upstream.failNext = { status: 400, message: 'bad thing' };
    await expect(await chat(svc, 'provider_a', hello, auth), 400, 'provider_a upstream error 400: bad thing');
    upstream.failNext = { status: 502, message: 'upstream down' };
    await expect(await chat(svc, 'provider_a', hello, auth), 500, 'provider_a upstream error 502: upstream down');
    upstream.garbageNext = true;
    await expect(await chat(svc, 'provider_a', hello, auth), 500, 'provider_a upstream sent an invalid response');
    t.equal(svc.admin.keyInfo(info.id)?.total_cost, 0, 'failed requests cost nothing');
  });

  t.test('forwarding to an upstream, metered exactly from its usage', async (t) => {
    const before = svc.admin.balance('alice').cu_balance;
    const res = await chat(svc, 'provider_a', { ...hello, temperature: 0.5 }, { 'x-api-key': apiKey });
    t.equal(res.status, 200);
    const body = await res.json();
    t.match(body, { object: 'chat.completion', model: 'gen-4o', choices: [{ message: { content: 'Upstream says hi' } }] });
    const sent = upstream.requests.at(-1)!;
    t.equal(sent.path, '/v1/chat/completions');
    t.equal(sent.authorization, 'Bearer sk-upstream-secret', 'the upstream key, not the client key');
    t.match(sent.body, { model: 'gen-4o', temperature: 0.5, messages: hello.messages });
    // 1000 prompt tokens at 42500 CU/M + 2000 completion tokens at 170000 CU/M = 42.5 + 340 = 382.5 CU
    t.equal(svc.admin.keyInfo(info.id)?.total_cost, 383, 'total_cost rounds up');
    t.equal(svc.admin.balance('alice').cu_balance, before - 383, 'balance rounds down (99617.5 -> 99617)');
    t.same(svc.admin.usage(info.id).at(-1), { kind: 'chat', item: 'provider_a/gen-4o', quantity_in: 1000, quantity_out: 2000, cost_micro: 382_500_000 });
  });

  t.test('SSE passthrough from the upstream', async (t) => {
    // Usage within the request's bounds: what the upstream reports is what is charged (usage above them is cut to the reservation).
    usage = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 };
    const res = await chat(svc, 'provider_a', { ...hello, model: 'gen-4o-mini', stream: true }, auth);
    t.equal(res.status, 200);
    t.match(res.headers.get('content-type'), /^text\/event-stream/);
    const text = await res.text();
    const events = text.split('\n\n').filter(Boolean);
    t.ok(
      events.every((e) => e.startsWith('data: ')),
      'every event is a data line',
    );
    t.equal(events.at(-1), 'data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)));
    t.equal(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join(''), 'Upstream', 'content as the upstream sent it');
    t.equal(upstream.requests.at(-1)!.body.stream, true);
    t.same(svc.admin.usage(info.id).at(-1), {
      kind: 'chat',
      item: 'provider_a/gen-4o-mini',
      quantity_in: 10,
      quantity_out: 20,
      cost_micro: 7000 * 10 + 28000 * 20,
    });
  });

  t.test('402 when the balance is exhausted', async (t) => {
    svc.admin.createUser('poor');
    const poor = svc.admin.createApiKey('poor').apiKey;
    svc.admin.setCredits('poor', { monthlyUnused: 0, prepaid: 0 });
    const res = await chat(svc, 'provider_c', { ...hello, model: 'twin-2.5-flash' }, { authorization: `Bearer ${poor}` });
    t.equal(res.status, 402);
    t.match(await res.json(), { error: /^Insufficient CU balance/ });
    svc.admin.setCredits('poor', { prepaid: 1 });
    const short = await chat(svc, 'provider_c', { ...hello, model: 'twin-2.5-flash' }, { authorization: `Bearer ${poor}` });
    t.equal(short.status, 402, "1 CU does not cover the request's worst case");
    t.match(await short.json(), {
      error:
        /^Insufficient CU balance: this request may cost up to \d+ CU \(at most \d+ prompt tokens and 512 output tokens of twin-2\.5-flash\) and the account has 1 CU available\./,
    });
    svc.admin.setCredits('poor', { prepaid: 200 });
    t.equal(
      (await chat(svc, 'provider_c', { ...hello, model: 'twin-2.5-flash' }, { authorization: `Bearer ${poor}` })).status,
      200,
      'prepaid credit covering the worst case admits again',
    );
  });

  t.test('concurrent requests from several keys charge the right keys', async (t) => {
    const keys = ['k1', 'k2', 'k3'].map((u) => ({ user: u, ...svc.admin.createApiKey(u) }));
    usage = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 };
    const rounds = [1, 2, 3];
    await Promise.all(
      keys.flatMap((k, i) =>
        Array.from({ length: rounds[i]! }, () =>
          chat(svc, 'provider_a', { ...hello, model: 'gen-5-nano' }, { authorization: `Bearer ${k.apiKey}` }).then((r) => r.text()),
        ),
      ),
    );
    keys.forEach((k, i) => {
      const ledger = svc.admin.usage(k.info.id);
      t.equal(ledger.length, rounds[i], `${k.user}: one ledger row per request`);
      t.equal(
        ledger.reduce((s, r) => s + r.cost_micro, 0),
        rounds[i]! * (10 * 500 + 20 * 4000),
      );
    });
  });
});
