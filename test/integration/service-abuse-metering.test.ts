// Issue 20 rows 4 and 7 and issue 23 item 5 on loopback: concurrent chats and one huge chat cannot overdraw an account; null bodies and bogus upstream usage get exact answers.
import t from 'tap';
import { startScriptedUpstream } from '../support/scripted-upstream.js';
import { pino } from 'pino';
import { startService } from '../../src/service/index.js';
import { chatBounds } from '../../src/service/http/chat-metering.js';
import { DEFAULT_LIMITS } from '../../src/service/options.js';
import type { ServiceContext } from '../../src/service/context.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const silent = pino({ level: 'silent' });

/** The shared scripted model as a slow upstream: "slow answer" after `delayMs`, with the usage `usage(body)` says. */
const slowUpstream = (delayMs: number, usage: (body: Record<string, unknown>) => unknown) =>
  startScriptedUpstream({ firstTokenMs: delayMs, tokensPerSecond: 1000, answer: () => ({ text: 'slow answer' }), usage });

const post = (url: string, key: string, body: unknown) =>
  fetch(`${url}/api/core/provider_a/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, text: await r.text() }));

t.test('row 4: 40 simultaneous chats of a free account against a slow upstream', async (t) => {
  // The upstream bills every request as much as the request allows: the whole prompt bound and every output token.
  const content = 'Voice: tell me a long story about robots. '.repeat(50);
  const request = { model: 'gen-5', messages: [{ role: 'user' as const, content }] };
  const bounds = chatBounds({ limits: DEFAULT_LIMITS } as ServiceContext, 'provider_a', request, false);
  const upstream = await slowUpstream(400, (body) => ({ prompt_tokens: bounds.promptTokens, completion_tokens: body.max_tokens, total_tokens: 0 }));
  const svc = await startService({
    dbPath: ':memory:',
    jwtSecret: 'm'.repeat(40),
    logger: silent,
    backends: { chat: { provider_a: { kind: 'upstream', baseUrl: upstream.baseUrl, apiKey: 'sk-up' } } },
  });
  t.teardown(async () => {
    await svc.close();
    await upstream.close();
  });
  svc.admin.createUser('free-user', 'free');
  // Five keys (the free plan allows two: upgrade, create, downgrade) so the per-key request limit is not what stops the attack.
  svc.admin.setPlan('free-user', 'starter');
  const keys = Array.from({ length: 5 }, () => svc.admin.createApiKey('free-user').apiKey);
  svc.admin.setPlan('free-user', 'free');
  t.equal(svc.admin.balance('free-user').cu_balance, 10_000, 'a free account: 10,000 CU');
  const reservationCu = bounds.reserveMicro / 1e6;
  t.comment(`each request reserves ${reservationCu.toFixed(1)} CU (prompt bound ${bounds.promptTokens}, output bound ${bounds.outputTokens} tokens)`);

  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => post(svc.url, keys[i % keys.length]!, request)));
  const ok = answers.filter((a) => a.status === 200);
  const refused = answers.filter((a) => a.status === 402);
  t.equal(ok.length + refused.length, 40, 'each request is answered or refused with 402');
  t.equal(ok.length, Math.floor(10_000 / reservationCu), 'admitted while the balance less open reservations covered each worst case');
  t.equal(upstream.requests.length, ok.length, 'refused requests never reach the upstream');
  t.same(JSON.parse(refused[0]!.text), {
    error: 'Insufficient CU balance: the remaining compute units are reserved by requests in progress. Retry when they finish, or add prepaid credit.',
  });
  const balance = svc.admin.balance('free-user').cu_balance;
  t.ok(balance >= 0, `balance ${balance} CU: never below zero (was -46,012, then at most one reservation below)`);
  t.ok(balance < reservationCu, 'what is left is less than one more request could cost');
  const after = await post(svc.url, keys[0]!, request);
  t.equal(after.status, 402);
  t.match(JSON.parse(after.text), {
    error: new RegExp(
      `^Insufficient CU balance: this request may cost up to ${Math.ceil(reservationCu)} CU \\(at most ${bounds.promptTokens} prompt tokens and ${bounds.outputTokens} output tokens of gen-5\\) and the account has ${balance} CU available\\. Lower max_tokens, shorten the request, or add prepaid credit\\.$`,
    ),
  });
});

t.test('issue 23: one request echoing 3,000 tool messages is refused before the upstream when the balance cannot cover its worst case', async (t) => {
  // The upstream bills the whole prompt bound and every output token, as an echoing model would.
  let bounds: ReturnType<typeof chatBounds> | undefined;
  const upstream = await slowUpstream(10, (body) => ({ prompt_tokens: bounds?.promptTokens ?? 0, completion_tokens: body.max_tokens, total_tokens: 0 }));
  const svc = await startService({
    dbPath: ':memory:',
    jwtSecret: 'e'.repeat(40),
    logger: silent,
    backends: { chat: { provider_a: { kind: 'upstream', baseUrl: upstream.baseUrl, apiKey: 'sk-up' } } },
  });
  t.teardown(async () => {
    await svc.close();
    await upstream.close();
  });
  svc.admin.createUser('free-user', 'free');
  const { apiKey, info } = svc.admin.createApiKey('free-user');
  const messages = [
    { role: 'user' as const, content: 'Voice: repeat everything' },
    ...Array.from({ length: 3000 }, (_, i) => ({ role: 'tool' as const, tool_call_id: `call_${i}`, content: `result ${i}: ${'echo '.repeat(50)}` })),
  ];
  const huge = { model: 'gen-4o', messages };
  bounds = chatBounds({ limits: DEFAULT_LIMITS } as ServiceContext, 'provider_a', huge, false);
  const worst = bounds.reserveMicro / 1e6;
  t.ok(JSON.stringify(huge).length < 1024 * 1024, `the request fits the body limit (${JSON.stringify(huge).length} bytes)`);
  t.ok(worst > 10_000, `its worst case is ${worst.toFixed(0)} CU, more than the free plan's 10,000`);
  const refused = await post(svc.url, apiKey, huge);
  t.equal(refused.status, 402);
  t.same(JSON.parse(refused.text), {
    error: `Insufficient CU balance: this request may cost up to ${Math.ceil(worst)} CU (at most ${bounds.promptTokens} prompt tokens and 4096 output tokens of gen-4o) and the account has 10000 CU available. Lower max_tokens, shorten the request, or add prepaid credit.`,
  });
  t.equal(upstream.requests.length, 0, 'the upstream was never called');
  t.equal(svc.admin.balance('free-user').cu_balance, 10_000, 'nothing charged (was -60,848 CU after this request)');
  t.same(svc.admin.usage(info.id), []);

  // A request whose worst case fits is served and charged, and the balance stays at or above zero.
  const small = { model: 'gen-4o', messages: messages.slice(0, 200), max_tokens: 256 };
  bounds = chatBounds({ limits: DEFAULT_LIMITS } as ServiceContext, 'provider_a', small, false);
  let served = 0;
  for (;;) {
    const r = await post(svc.url, apiKey, small);
    if (r.status !== 200) {
      t.equal(r.status, 402, 'until its worst case no longer fits');
      break;
    }
    served++;
  }
  const left = svc.admin.balance('free-user').cu_balance;
  t.ok(served > 0, `${served} requests of ${(bounds.reserveMicro / 1e6).toFixed(0)} CU at most were served`);
  t.ok(left >= 0 && left < bounds.reserveMicro / 1e6, `the balance ends at ${left} CU: never below zero`);
});

t.test('row 7: a null body and bogus upstream usage get exact answers; streams end and are charged', async (t) => {
  const upstream = await slowUpstream(10, () => ({ prompt_tokens: -1_000_000, completion_tokens: 5, total_tokens: -999_995 }));
  const svc = await startService({
    dbPath: ':memory:',
    jwtSecret: 'n'.repeat(40),
    logger: silent,
    backends: { chat: { provider_a: { kind: 'upstream', baseUrl: upstream.baseUrl, apiKey: 'sk-up' } } },
  });
  t.teardown(async () => {
    await svc.close();
    await upstream.close();
  });
  const { apiKey, info } = svc.admin.createApiKey('bob');
  for (const body of ['null', '[]', '42', '"hello"', 'true']) {
    const r = await post(svc.url, apiKey, body);
    t.same([r.status, JSON.parse(r.text)], [400, { error: 'Invalid request: the body must be a JSON object' }], `body ${body}`);
  }
  const bad = await post(svc.url, apiKey, '{"model":');
  t.same([bad.status, JSON.parse(bad.text)], [400, { error: 'Invalid JSON' }]);
  t.same(svc.admin.usage(info.id), [], 'refused requests are not charged');

  const messages = [{ role: 'user', content: 'hello there' }];
  const plain = await post(svc.url, apiKey, { model: 'gen-4o', messages });
  t.equal(plain.status, 200);
  const estimate = { prompt_tokens: 3, completion_tokens: 3 }; // "hello there": 11 characters; "slow answer": 11 characters
  t.match(
    JSON.parse(plain.text),
    { choices: [{ message: { content: 'slow answer' } }], usage: { ...estimate, total_tokens: 6 } },
    "the answer carries the usage charged, not the upstream's",
  );
  t.same(svc.admin.usage(info.id).at(-1), { kind: 'chat', item: 'provider_a/gen-4o', quantity_in: 3, quantity_out: 3, cost_micro: 3 * 42_500 + 3 * 170_000 });

  const streamed = await post(svc.url, apiKey, { model: 'gen-4o', messages, stream: true });
  t.equal(streamed.status, 200);
  t.match(streamed.text, /data: \[DONE\]\n\n$/, 'the stream ends (it never did)');
  t.same(
    svc.admin.usage(info.id).at(-1),
    { kind: 'chat', item: 'provider_a/gen-4o', quantity_in: 3, quantity_out: 3, cost_micro: 3 * 42_500 + 3 * 170_000 },
    'and is charged the estimate',
  );
});
