import t from 'tap';
import { isSecretField, redact, redactDeep, redactedView } from '../../src/redact.js';

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

t.test('each secret shape alone is redacted, and plain prose comes back as it was (the one-scan path)', async (t) => {
  const shapes: Array<[string, RegExp]> = [
    ['key_live_abc123', /^key_live_\[REDACTED\]$/],
    ['wss://user:pw@host/x', /^wss:\/\/\[REDACTED\]@host\/x$/],
    ['DB_PASSWORD=hunter2', /^DB_PASSWORD=\[REDACTED\]$/],
    ['--password hunter2', /^--password \[REDACTED\]$/],
    ['-token=abc', /^-token=\[REDACTED\]$/],
    ['{"client_secret":"abc"}', /^\{"client_secret":"\[REDACTED\]"\}$/],
    ['bearer abcdef', /^bearer \[REDACTED\]$/],
    ['BEARER abcdef', /^BEARER \[REDACTED\]$/],
    ['sk-abcdefghijklmnop', /^sk-[a-z]+\[REDACTED\]$/],
    ['eyJa.b.c', /^\[REDACTED\]$/],
  ];
  for (const [text, want] of shapes) t.match(redact(text), want, text);
  const prose = 'Hello there. My name is Pip, and I can see 3 people at 2.5 m (one waving)!';
  t.equal(redact(prose), prose);
});

t.test('isSecretField answers the same after its memory of names fills and starts again', async (t) => {
  const names = Array.from({ length: 5000 }, (_, i) => (i % 2 ? `field_${i}` : `field_${i}_password`));
  const first = names.map(isSecretField);
  t.same(names.map(isSecretField), first, 'same answers the second time');
  t.equal(first.filter(Boolean).length, 2500);
  t.equal(isSecretField('max_tokens'), false);
  t.equal(isSecretField('refresh_token'), true);
});

t.test('redactedView: the value itself when redactDeep changes nothing, else the same as redactDeep', async (t) => {
  let deep: Record<string, unknown> = { leaf: 'x' };
  for (let i = 0; i < 40; i++) deep = { next: deep };
  const clean = [
    { type: 'action', at: 1, label: 'speak', state: 'queued', value: { sentence: 'Hello: there - friend, "quoted"' }, origin: 'request_sent' },
    { type: 'model.answer', tool_calls: [{ name: 'move', arguments: { action: 'sit', speed: 0.5 } }], max_tokens: 20, keyword: 'go' },
    ['--verbose', 'x', 'plain'],
    'a=b and --flag value',
    42,
    null,
    { nothing: undefined, list: [] },
  ];
  for (const v of clean) {
    t.equal(redactedView(v), v, `${JSON.stringify(v)} comes back as itself`);
    t.equal(JSON.stringify(redactDeep(v)), JSON.stringify(v), 'and redactDeep agrees it holds no secret');
  }
  const secret = [
    { type: 'context', values: { wifi_password: 'hunter2' } },
    { type: 'prompt', prompt: 'use key_live_abcdef123' },
    { argv: ['cli', '--password', 'hunter2'] },
    { nested: [{ deeper: { text: 'Authorization: Bearer abc.def' } }] },
    { error: new Error('failed with sk-abcdefghijklmnop') },
    { when: new Date(0) },
    { token: 0 },
    deep,
  ];
  for (const v of secret) {
    t.not(redactedView(v), v, `${JSON.stringify(v).slice(0, 60)} is copied`);
    t.equal(JSON.stringify(redactedView(v)), JSON.stringify(redactDeep(v)), 'as redactDeep copies it');
  }
});
