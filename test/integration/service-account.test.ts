// Proves the account endpoints of `cortexd cloud`: JWT auth, balance, key lifecycle, plan limits, rate limit, error rows.
import t from 'tap';
import { pino } from 'pino';
import { startService, type RunningService } from '../../src/service/index.js';

const silent = pino({ level: 'silent' });

async function call(svc: RunningService, method: string, path: string, opts: { token?: string; body?: string } = {}) {
  const res = await fetch(svc.url + path, {
    method,
    headers: { ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}), ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: opts.body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

t.test('account endpoints', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'x'.repeat(40), logger: silent });
  t.teardown(() => svc.close());
  const token = await svc.admin.issueJwt('alice');

  t.test('balance of a new starter user', async (t) => {
    const r = await call(svc, 'GET', '/api/core/account/balance', { token });
    t.equal(r.status, 200);
    t.equal(r.body.plan, 'starter');
    t.equal(r.body.cu_balance, 100000);
    t.equal(r.body.monthly_unused_cu, 100000);
    t.equal(r.body.monthly_total_cu, 100000);
    t.equal(r.body.cancel_at_period_end, false);
    t.match(r.body.current_period_end, /^\d{4}-\d\d-01T00:00:00\.000Z$/);
  });

  t.test('missing or invalid JWT is 401 User not found', async (t) => {
    for (const path of ['/api/core/account/balance', '/api/core/api_keys']) {
      t.same(await call(svc, 'GET', path), { status: 401, body: { error: 'User not found' } });
      t.same(await call(svc, 'GET', path, { token: 'not-a-jwt' }), { status: 401, body: { error: 'User not found' } });
    }
    const forged = token.slice(0, -4) + (token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    t.same(await call(svc, 'POST', '/api/core/api_keys/create', { token: forged }), { status: 401, body: { error: 'User not found' } });
  });

  t.test('a valid JWT of an unknown user: balance 404', async (t) => {
    const other = await startService({ dbPath: ':memory:', jwtSecret: 'x'.repeat(40), logger: silent });
    t.teardown(() => other.close());
    const ghost = await other.admin.issueJwt('ghost');
    t.same(await call(svc, 'GET', '/api/core/account/balance', { token: ghost }), { status: 404, body: { error: 'User not found' } });
  });

  t.test('key lifecycle: create, list without secret, use, delete, refused at once', async (t) => {
    const created = await call(svc, 'POST', '/api/core/api_keys/create', { token });
    t.equal(created.status, 200);
    t.type(created.body.message, 'string');
    const apiKey = created.body.api_key as string;
    t.match(apiKey, /^key_live_[A-Za-z0-9_-]{44}$/);
    const info = created.body.api_key_info;
    t.match(info, { prefix: 'key_live_', total_cost: 0, deleted: false });
    t.match(info.name, /^api-key-\d+$/);
    t.ok(Date.parse(info.created_at) && Date.parse(info.updated_at));

    const listed = await call(svc, 'GET', '/api/core/api_keys', { token });
    t.equal(listed.status, 200);
    t.same(
      listed.body.api_keys.map((k: { id: string }) => k.id),
      [info.id],
    );
    const text = JSON.stringify(listed.body);
    t.notOk(text.includes(apiKey.slice('key_live_'.length)), 'listing never contains the secret');
    t.notOk('hash' in listed.body.api_keys[0], 'nor the hash');

    const use = () =>
      fetch(`${svc.url}/api/core/provider_a/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gen-4o', messages: [{ role: 'user', content: 'hello' }] }),
      });
    t.equal((await use()).status, 200, 'the new key works');

    t.same(await call(svc, 'POST', '/api/core/api_keys/delete', { token, body: JSON.stringify({ id: info.id }) }), {
      status: 200,
      body: { message: 'API key deleted' },
    });
    const refused = await use();
    t.equal(refused.status, 401, 'deleted key refused at once');
    t.same(await refused.json(), { error: 'Invalid API key: key not recognised' });
    t.same((await call(svc, 'GET', '/api/core/api_keys', { token })).body, { api_keys: [] });
    t.same(
      await call(svc, 'POST', '/api/core/api_keys/delete', { token, body: JSON.stringify({ id: info.id }) }),
      {
        status: 404,
        body: { error: 'API key not found' },
      },
      'not undoable, not deletable twice',
    );
  });

  t.test('delete errors', async (t) => {
    const del = (body?: string) => call(svc, 'POST', '/api/core/api_keys/delete', { token, body });
    t.same(await del(), { status: 400, body: { error: 'No data provided or invalid format' } });
    t.same(await del('{nope'), { status: 400, body: { error: 'No data provided or invalid format' } });
    t.same(await del('[1]'), { status: 400, body: { error: 'No data provided or invalid format' } });
    t.same(await del('{}'), { status: 400, body: { error: 'API key ID is required' } });
    t.same(await del('{"id": ""}'), { status: 400, body: { error: 'API key ID is required' } });
    t.same(await del('{"id": "no-such-id"}'), { status: 404, body: { error: 'API key not found' } });
    const bob = await svc.admin.issueJwt('bob');
    const bobs = await call(svc, 'POST', '/api/core/api_keys/create', { token: bob });
    t.same(await del(JSON.stringify({ id: bobs.body.api_key_info.id })), { status: 404, body: { error: 'API key not found' } }, "another user's key");
    t.equal((await call(svc, 'GET', '/api/core/api_keys', { token: bob })).body.api_keys.length, 1, "bob's key untouched");
  });

  t.test('plan key limits: 403 at the limit with a message naming it', async (t) => {
    const carol = await svc.admin.issueJwt('carol');
    for (let i = 0; i < 5; i++) t.equal((await call(svc, 'POST', '/api/core/api_keys/create', { token: carol })).status, 200);
    const over = await call(svc, 'POST', '/api/core/api_keys/create', { token: carol });
    t.equal(over.status, 403);
    t.match(over.body.error, /starter plan allows 5 API keys.*[Dd]elete.*upgrade/);
    svc.admin.setPlan('carol', 'free');
    svc.admin.createUser('dave', 'free');
    const dave = await svc.admin.issueJwt('dave');
    t.equal((await call(svc, 'POST', '/api/core/api_keys/create', { token: dave })).status, 200);
    t.equal((await call(svc, 'POST', '/api/core/api_keys/create', { token: dave })).status, 200);
    t.match(await call(svc, 'POST', '/api/core/api_keys/create', { token: dave }), { status: 403, body: { error: /free plan allows 2/ } });
  });
});

t.test('rate limit of key operations: 429 with Retry-After', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'y'.repeat(40), logger: silent, keyRateLimit: { capacity: 3, refillPerSecond: 0.01 } });
  t.teardown(() => svc.close());
  const token = await svc.admin.issueJwt('erin');
  for (let i = 0; i < 3; i++) t.equal((await call(svc, 'GET', '/api/core/api_keys', { token })).status, 200);
  const res = await fetch(`${svc.url}/api/core/api_keys`, { headers: { authorization: `Bearer ${token}` } });
  t.equal(res.status, 429);
  t.ok(Number(res.headers.get('retry-after')) > 0);
  t.match(await res.json(), { error: /^Rate limit exceeded/ });
  const other = await svc.admin.issueJwt('frank');
  t.equal((await call(svc, 'GET', '/api/core/api_keys', { token: other })).status, 200, 'buckets are per user');
});

t.test('unknown paths and oversized bodies use the error shape', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'z'.repeat(40), logger: silent, limits: { bodyBytes: 1000 } });
  t.teardown(() => svc.close());
  const token = await svc.admin.issueJwt('gina');
  t.same(await call(svc, 'GET', '/nope'), { status: 404, body: { error: 'Not found: GET /nope' } });
  const big = await call(svc, 'POST', '/api/core/api_keys/delete', { token, body: JSON.stringify({ id: 'x'.repeat(2000) }) });
  t.same(big, { status: 413, body: { error: 'Request body too large: the limit is 1000 bytes' } });
});

t.test('storage failures are the spec 500 rows', async (t) => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const Database = (await import('../../src/service/sqlite.js')).loadSqlite();
  const dir = mkdtempSync(join(tmpdir(), 'svc-db-'));
  const dbPath = join(dir, 'cloud.sqlite');
  const svc = await startService({ dbPath, jwtSecret: 'q'.repeat(40), logger: silent });
  t.teardown(async () => {
    await svc.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const token = await svc.admin.issueJwt('hank');
  const { info } = svc.admin.createApiKey('hank');
  // Another process breaks the key table under the running service.
  const other = new Database(dbPath);
  other.exec('ALTER TABLE api_keys RENAME TO api_keys_gone');
  other.close();
  t.same(await call(svc, 'GET', '/api/core/api_keys', { token }), { status: 500, body: { error: 'Failed to fetch API keys' } });
  t.same(await call(svc, 'POST', '/api/core/api_keys/create', { token }), { status: 500, body: { error: 'Failed to create API key' } });
  t.same(await call(svc, 'POST', '/api/core/api_keys/delete', { token, body: JSON.stringify({ id: info.id }) }), {
    status: 500,
    body: { error: 'Failed to delete API key' },
  });
});
