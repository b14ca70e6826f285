// Proves the client retries only 429, 503-unreachable and resets before any byte, with capped jittered backoff honouring Retry-After.
import t from 'tap';
import { CloudHttp } from '../../src/cloud/http.js';
import { parseRetryAfter, type RetryOptions } from '../../src/cloud/retry.js';
import { DeleteKeyResponseSchema } from '../../src/cloud/protocol.js';

type Step = { status: number; body?: object; headers?: Record<string, string> } | { reset: true };

/** A fetch that plays `steps` in order and records every call. */
function scripted(steps: Step[]) {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const impl = (async (url: string | URL | Request, init?: RequestInit) => {
    calls.push({ url: String(url), init: init ?? {} });
    const step = steps[Math.min(calls.length - 1, steps.length - 1)]!;
    if ('reset' in step) throw new TypeError('fetch failed', { cause: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }) });
    return new Response(JSON.stringify(step.body ?? {}), { status: step.status, headers: { 'content-type': 'application/json', ...step.headers } });
  }) as typeof fetch;
  return { impl, calls };
}

function client(steps: Step[], extra: Partial<RetryOptions> = {}) {
  const f = scripted(steps);
  const waits: number[] = [];
  const retry: RetryOptions = {
    maxRetries: 3,
    baseDelayMs: 100,
    maxDelayMs: 1000,
    maxRetryAfterMs: 30_000,
    sleep: async (ms) => void waits.push(ms),
    random: () => 1,
    ...extra,
  };
  const http = new CloudHttp({ baseUrl: 'http://h.test/', fetch: f.impl, retry });
  const call = () =>
    http.json(
      { method: 'POST', path: '/api/core/api_keys/delete', body: { id: 'k' }, credential: { kind: 'bearer', token: 'eyJa.eyJb.c' } },
      DeleteKeyResponseSchema,
    );
  return { call, calls: f.calls, waits };
}

t.test('429 with Retry-After waits exactly what the server asked, then succeeds', async (t) => {
  const c = client([
    { status: 429, body: { error: 'slow down' }, headers: { 'retry-after': '2' } },
    { status: 200, body: { message: 'deleted' } },
  ]);
  t.same(await c.call(), { message: 'deleted' });
  t.same(c.waits, [2000]);
  t.equal(c.calls.length, 2);
  t.equal((c.calls[0]!.init.headers as Record<string, string>).authorization, 'Bearer eyJa.eyJb.c');
  t.equal(c.calls[0]!.url, 'http://h.test/api/core/api_keys/delete');
});

t.test('Retry-After as an HTTP date', async (t) => {
  t.equal(parseRetryAfter('Wed, 21 Oct 2026 07:28:10 GMT', Date.parse('Wed, 21 Oct 2026 07:28:00 GMT')), 10_000);
  t.equal(parseRetryAfter('0'), 0);
  t.equal(parseRetryAfter('soon'), undefined);
  t.equal(parseRetryAfter(null), undefined);
});

t.test('a Retry-After beyond the cap is surfaced, not waited', async (t) => {
  const c = client([{ status: 429, body: { error: 'quota' }, headers: { 'retry-after': '3600' } }]);
  await t.rejects(c.call(), { name: 'CloudRateLimitError', status: 429, retryAfterMs: 3_600_000 });
  t.same(c.waits, []);
});

t.test('backoff without advice grows, is capped, and gives up after maxRetries', async (t) => {
  const c = client([{ status: 503, body: { error: 'Failed to connect to provider_a server' } }]);
  await t.rejects(c.call(), { name: 'CloudUnavailableError', message: '503: Failed to connect to provider_a server' });
  t.equal(c.calls.length, 4);
  t.same(c.waits, [100, 200, 400]);
  const low = client([{ status: 429, body: { error: 'busy' } }], { maxRetries: 6, random: () => 0 });
  await t.rejects(low.call(), { name: 'CloudRateLimitError' });
  t.same(low.waits, [50, 100, 200, 400, 500, 500], 'jitter keeps at least half; the cap holds');
});

t.test('connection reset before any byte is retried', async (t) => {
  const c = client([{ reset: true }, { reset: true }, { status: 200, body: { message: 'ok' } }]);
  t.same(await c.call(), { message: 'ok' });
  t.equal(c.calls.length, 3);
});

t.test('never retried: 400, 401, 403, 404, 500, 503 key not configured', async (t) => {
  const cases: Array<[number, string, string]> = [
    [400, 'API key ID is required', 'CloudBadRequestError'],
    [401, 'User not found', 'CloudAuthError'],
    [403, 'plan limit reached: starter allows 5 keys; delete a key or upgrade', 'CloudForbiddenError'],
    [404, 'API key not found', 'CloudNotFoundError'],
    [500, 'Failed to delete API key', 'CloudServerError'],
    [503, 'provider_a API key not configured', 'CloudUnavailableError'],
  ];
  for (const [status, error, name] of cases) {
    const c = client([
      { status, body: { error } },
      { status: 200, body: { message: 'ok' } },
    ]);
    await t.rejects(c.call(), { name, status, serverMessage: error, message: `${status}: ${error}`, endpoint: 'POST /api/core/api_keys/delete' });
    t.equal(c.calls.length, 1, `${status} sent once`);
  }
});

t.test('abort during a backoff wait stops retrying', async (t) => {
  const ac = new AbortController();
  const f = scripted([{ status: 429, body: { error: 'x' } }]);
  const sleep = async () => {
    ac.abort(new Error('stop'));
    throw ac.signal.reason;
  };
  const h = new CloudHttp({ baseUrl: 'http://h.test', fetch: f.impl, retry: { maxRetries: 5, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1, sleep } });
  await t.rejects(h.send({ method: 'GET', path: '/x', credential: { kind: 'none' }, signal: ac.signal }), { message: 'stop' });
  t.equal(f.calls.length, 1);
});
