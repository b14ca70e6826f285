import t from 'tap';
import { isSecretField, redact, redactDeep } from '../../src/redact.js';

t.test('redacts API keys, JWTs, bearer tokens and api_key query values', async (t) => {
  t.equal(redact('key key_live_abcDEF123_x used'), 'key key_live_[REDACTED] used');
  t.equal(redact('wss://h/asr?api_key=key_test_s3cret&x=1'), 'wss://h/asr?api_key=[REDACTED]&x=1');
  t.equal(redact('Authorization: Bearer abc.def'), 'Authorization: Bearer [REDACTED]');
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1In0.sig_nature';
  t.notMatch(redact(`token ${jwt}`), /eyJ/);
});

t.test('redactDeep blanks secret fields and redacts nested strings', async (t) => {
  const out = redactDeep({ api_key: 'plain', nested: { url: 'x?api_key=zzz' }, list: ['key_live_q1w2e3'] });
  t.same(out, { api_key: '[REDACTED]', nested: { url: 'x?api_key=[REDACTED]' }, list: ['key_live_[REDACTED]'] });
});

t.test('JWTs are found in one linear pass: a 64 KB eyJ- flood comes back unchanged, JWTs around it are redacted', async (t) => {
  const flood = 'eyJ-'.repeat(16 * 1024);
  t.equal(redact(flood), flood, 'no JWT in it, nothing changed');
  const jwt = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl';
  t.equal(redact(`${flood} ${jwt} tail`), `${flood} [REDACTED] tail`);
  t.equal(redact(`x-${jwt}.rest`), 'x-[REDACTED].rest', 'after a hyphen, up to the third segment');
  t.equal(redact(`a${jwt}`), `a${jwt}`, 'not at a word start: not a JWT');
  t.equal(redact('eyJa..b eyJa.b'), 'eyJa..b eyJa.b', 'an empty middle or a missing third segment is no JWT');
  // The old expression is the oracle of what counts as a JWT (it is quadratic only on runs without dots).
  const oldRule = /\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
  for (const sample of [`${'eyJ.'.repeat(4000)}x`, 'a.eyJx.y.z.eyJ-eyJq.w.e', `k-${jwt}-${jwt}`, 'eyJ..eyJa.b.c', `"${jwt}" and eyJ.x`])
    t.equal(redact(sample), sample.replace(oldRule, '[REDACTED]'), `as the old rule: ${sample.slice(0, 30)}`);
});

t.test('secret field names are a rule: parts, words and pairs, not a list', async (t) => {
  for (const name of [
    'wifi_passphrase',
    'authorization_header',
    'bearer',
    'aws_access_key',
    'pin',
    'doorPin',
    'auth_header',
    'signing_key',
    'x-api-key',
    'DB_PASSWORD',
    'refresh_token',
    'sessionCookie',
    'otp',
  ])
    t.ok(isSecretField(name), `${name} is secret`);
  for (const name of ['max_tokens', 'prompt_tokens', 'keyword', 'key_frames', 'spin', 'pinned', 'mapping', 'auth', 'author', 'hotkey'])
    t.notOk(isSecretField(name), `${name} is not`);
});
