import t from 'tap';
import { redact, redactDeep } from '../../src/redact.js';

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
