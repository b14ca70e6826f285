// The balance of a 10,000 CU account never goes below zero: concurrent chats of 700 tool messages, on the offline model and on an upstream that reports more usage than allowed.
import t from 'tap';
import { pino } from 'pino';
import { startService, type RunningService } from '../../src/service/index.js';
import { chatBounds } from '../../src/service/http/chat-metering.js';
import { DEFAULT_LIMITS } from '../../src/service/options.js';
import type { ServiceContext } from '../../src/service/context.js';
import { startScriptedUpstream } from '../support/scripted-upstream.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const silent = pino({ level: 'silent' });

const post = (url: string, key: string, body: unknown) =>
  fetch(`${url}/api/core/provider_a/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  }).then(async (r) => ({ status: r.status, text: await r.text() }));

/** 700 tool messages, as the audit sent, and a bound on the answer so the worst case fits a few times in 10,000 CU. */
const request = {
  model: 'gen-4o',
  max_tokens: 2000,
  messages: [
    { role: 'user' as const, content: 'Voice: repeat every tool result' },
    ...Array.from({ length: 700 }, (_, i) => ({ role: 'tool' as const, tool_call_id: `call_${i}`, content: `result ${i}: ${'echo '.repeat(8)}` })),
  ],
};

/** A free account (10,000 CU) with five keys, so the per-key request limit is not what stops a burst. */
function account(svc: RunningService): string[] {
  svc.admin.createUser('free-user', 'free');
  svc.admin.setPlan('free-user', 'starter');
  const keys = Array.from({ length: 5 }, () => svc.admin.createApiKey('free-user').apiKey);
  svc.admin.setPlan('free-user', 'free');
  return keys;
}

/** Sends `rounds` bursts of `burst` concurrent requests; returns every status. */
async function bursts(svc: RunningService, keys: string[], rounds: number, burst: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const answers = await Promise.all(Array.from({ length: burst }, (_, i) => post(svc.url, keys[i % keys.length]!, request)));
    statuses.push(...answers.map((a) => a.status));
  }
  return statuses;
}

t.test('an upstream reporting ten times the usage a request allows: concurrent chats stop at zero, never below', async (t) => {
  const bounds = chatBounds({ limits: DEFAULT_LIMITS } as ServiceContext, 'provider_a', request, false);
  const upstream = await startScriptedUpstream({
    firstTokenMs: 50,
    tokensPerSecond: 1000,
    answer: () => ({ text: 'echo' }),
    usage: () => ({ prompt_tokens: bounds.promptTokens * 10, completion_tokens: 20_000, total_tokens: 0 }),
  });
  const svc = await startService({
    dbPath: ':memory:',
    jwtSecret: 'f'.repeat(40),
    logger: silent,
    backends: { chat: { provider_a: { kind: 'upstream', baseUrl: upstream.baseUrl, apiKey: 'sk-up' } } },
  });
  t.teardown(async () => {
    await svc.close();
    await upstream.close();
  });
  const keys = account(svc);
  const statuses = await bursts(svc, keys, 4, 12);
  const served = statuses.filter((s) => s === 200).length;
  t.ok(
    statuses.every((s) => s === 200 || s === 402),
    `each request is served or refused with 402 (${served} served)`,
  );
  t.ok(served > 0, 'requests whose worst case fits are served');
  const balance = svc.admin.balance('free-user').cu_balance;
  t.ok(balance >= 0, `the balance ends at ${balance} CU: never below zero (the audit: -6,644)`);
  t.equal((await post(svc.url, keys[0]!, request)).status, 402, 'then the next request is refused');
});

t.test('the offline model: concurrent chats of 700 tool messages until the account is empty, never below zero', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'g'.repeat(40), logger: silent });
  t.teardown(() => svc.close());
  const keys = account(svc);
  let statuses: number[] = [];
  // Bursts until every request of a burst is refused: the account ran dry, as far as this request's worst case is concerned.
  for (let round = 0; round < 200; round++) {
    const burst = await bursts(svc, keys, 1, 12);
    statuses = statuses.concat(burst);
    t.ok(svc.admin.balance('free-user').cu_balance >= 0, `after burst ${round}: ${svc.admin.balance('free-user').cu_balance} CU`);
    if (burst.every((s) => s === 402)) break;
  }
  t.ok(
    statuses.every((s) => s === 200 || s === 402),
    'each request is served or refused with 402',
  );
  t.ok(statuses.at(-1) === 402, `the account ran dry after ${statuses.filter((s) => s === 200).length} served requests`);
  t.ok(svc.admin.balance('free-user').cu_balance >= 0, 'and is never below zero');
});
