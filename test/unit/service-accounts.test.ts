// Proves the service's accounts and keys on an in-memory database: charges in order, debt, period rollover, hashed keys, limits, rate buckets.
import t from 'tap';
import { Accounts, nextMonthStart } from '../../src/service/accounts.js';
import { openDb } from '../../src/service/db.js';
import { ApiKeys } from '../../src/service/keys.js';
import { TokenBuckets } from '../../src/service/ratelimit.js';

t.test('charges take the monthly allowance first, then prepaid, and never leave a debt', async (t) => {
  let now = new Date('2026-03-15T12:00:00Z');
  const db = openDb(':memory:');
  t.teardown(() => db.close());
  const accounts = new Accounts(db, () => now);
  const keys = new ApiKeys(db, () => now);
  const u = accounts.createUser('u', 'free');
  const k = keys.create(u.id, { plan: 'free', limit: 2 }).info;
  accounts.setCredits(u.id, { monthlyUnused: 10, prepaid: 5 });
  accounts.charge({ keyId: k.id, userId: u.id, kind: 'chat', item: 'x', quantityIn: 1, costMicro: 12_000_000 });
  t.match(accounts.balance(u.id), {
    plan: 'free',
    cu_balance: 3,
    monthly_unused_cu: 0,
    monthly_total_cu: 10000,
    current_period_end: '2026-04-01T00:00:00.000Z',
  });
  t.equal(accounts.charge({ keyId: k.id, userId: u.id, kind: 'chat', item: 'x', quantityIn: 1, costMicro: 4_500_000 }), 3_000_000, 'cut to the 3 CU left');
  t.equal(accounts.balance(u.id)?.cu_balance, 0, 'no overdraft');
  t.equal(accounts.availableMicro(u.id), 0);
  t.equal(keys.get(k.id)?.total_cost, 15, 'the key is charged what was taken');
  accounts.setCredits(u.id, { prepaid: 5 });
  const r = accounts.reserve(u.id, 2_000_000)!;
  t.equal(
    accounts.charge({ keyId: k.id, userId: u.id, kind: 'asr', item: 'x', quantityIn: 1, costMicro: 4_000_000 }),
    3_000_000,
    'a charge leaves a reservation alone',
  );
  t.equal(
    accounts.settle(r, { keyId: k.id, userId: u.id, kind: 'chat', item: 'x', quantityIn: 1, costMicro: 9_000_000 }),
    2_000_000,
    'a request costs at most its reservation',
  );
  t.equal(accounts.availableMicro(u.id), 0);

  now = new Date('2026-05-02T00:00:00Z');
  t.match(accounts.balance(u.id), { monthly_unused_cu: 10000, current_period_end: '2026-06-01T00:00:00.000Z' }, 'allowance reset after two periods');
  t.equal(accounts.balance(u.id)?.cu_balance, 10000, '10000 monthly + no debt');
});

t.test('billing periods are calendar months', async (t) => {
  t.equal(nextMonthStart(new Date('2026-12-31T23:59:59Z')).toISOString(), '2027-01-01T00:00:00.000Z');
});

t.test('keys: hash only, verify, delete, limit', async (t) => {
  const db = openDb(':memory:');
  t.teardown(() => db.close());
  const accounts = new Accounts(db);
  const keys = new ApiKeys(db);
  const a = accounts.createUser('a');
  const b = accounts.createUser('b');
  const { apiKey, info } = keys.create(a.id, { plan: 'starter', limit: 2 });
  const stored = db.prepare('SELECT * FROM api_keys').all() as Array<Record<string, unknown>>;
  t.notOk(JSON.stringify(stored).includes(apiKey.slice(21)), 'the secret is not stored');
  t.match(keys.verify(apiKey), { ok: true, key: { keyId: info.id, userId: a.id, prefix: 'key_live_' } });
  t.same(keys.verify(apiKey.replace('key_live_', 'key_test_')), { ok: false, details: 'key not recognised' });
  t.equal(keys.delete(b.id, info.id), false, "another user's key");
  t.equal(keys.delete(a.id, info.id), true);
  t.same(keys.verify(apiKey), { ok: false, details: 'key not recognised' });
  keys.create(a.id, { plan: 'starter', limit: 2 });
  keys.create(a.id, { plan: 'starter', limit: 2, prefix: 'key_test_' });
  t.throws(() => keys.create(a.id, { plan: 'starter', limit: 2 }), { message: /starter plan allows 2 API keys/ });
  t.equal(keys.list(a.id).length, 2);
  t.equal(keys.list(a.id)[1]?.prefix, 'key_test_');
});

t.test('token buckets', async (t) => {
  let ms = 0;
  const b = new TokenBuckets({ capacity: 2, refillPerSecond: 0.5 }, () => ms);
  t.equal(b.take('x'), 0);
  t.equal(b.take('x'), 0);
  t.equal(b.take('x'), 2, 'two seconds until a token');
  t.equal(b.take('y'), 0, 'per subject');
  ms += 2000;
  t.equal(b.take('x'), 0);
});

t.test('rotateApiKey: one fresh key per start, old ones refused', async (t) => {
  const { createAdmin } = await import('../../src/service/admin.js');
  const { JwtAuthority } = await import('../../src/service/auth.js');
  const db = openDb(':memory:');
  t.teardown(() => db.close());
  const keys = new ApiKeys(db);
  const admin = createAdmin(new Accounts(db), keys, new JwtAuthority('k'.repeat(40)));
  const first = admin.rotateApiKey('embedded', 'enterprise');
  for (let i = 0; i < 10; i++) admin.rotateApiKey('embedded');
  const last = admin.rotateApiKey('embedded');
  t.equal(keys.verify(first.apiKey).ok, false);
  t.equal(keys.verify(last.apiKey).ok, true);
  t.equal(admin.balance('embedded').plan, 'enterprise');
});
