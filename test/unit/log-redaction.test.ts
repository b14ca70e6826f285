// Proves no log line, error message or thrown error's text carries an API key, a JWT or an api_key= value.
import t, { type Test } from 'tap';
import { createLogger } from '../../src/log.js';
import { ConfigError, CortexError, describeError } from '../../src/errors.js';

const KEY = 'key_live_S3cretS3cret123';
const TEST_KEY = 'key_test_An0therSecret99';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyb2JvdCJ9.c2lnbmF0dXJlX3NlY3JldA';
const QUERY_SECRET = 'plainQuerySecret42';
const URL_WITH_KEY = `wss://api.example/asr?api_key=${QUERY_SECRET}&lang=en`;
const SECRETS = [KEY, TEST_KEY, JWT, QUERY_SECRET, 'S3cretS3cret123', 'An0therSecret99', 'c2lnbmF0dXJlX3NlY3JldA'];

/** A logger writing into an array, in JSON or readable form. */
function capture(pretty = false) {
  const lines: string[] = [];
  const logger = createLogger({ level: 'trace', pretty, destination: { write: (s: string) => void lines.push(s) } });
  return { logger, lines, text: () => lines.join('') };
}

function assertClean(t: Test, text: string) {
  for (const s of SECRETS) t.notOk(text.includes(s), `no ${s.slice(0, 12)}... in ${JSON.stringify(text.slice(0, 200))}`);
}

t.test('messages: plain, printf-style arguments, %j and %o objects', async (t) => {
  const { logger, lines, text } = capture();
  logger.info(`using ${KEY}`);
  logger.info('token %s and %s', JWT, URL_WITH_KEY);
  logger.info('payload %j', { key: TEST_KEY, nested: { url: URL_WITH_KEY } });
  logger.info('payload %o', { api_key: 'notshapedbutsecret', jwt: JWT });
  t.equal(lines.length, 4);
  assertClean(t, text());
  t.notOk(text().includes('notshapedbutsecret'), 'a value under a secret field name is blanked in interpolated objects');
  const first = JSON.parse(lines[0]!) as { msg: string };
  t.equal(first.msg, 'using key_live_[REDACTED]', 'the recognisable prefix is kept');
  t.match(lines[1], /api_key=\[REDACTED\]&lang=en/);
});

t.test('fields of the merging object, nested and under secret names', async (t) => {
  const { logger, lines, text } = capture();
  logger.warn({ url: URL_WITH_KEY, headers: { Authorization: `Bearer ${JWT}` }, api_key: 'opaque-value-1', list: [KEY] }, 'connecting');
  assertClean(t, text());
  t.notOk(text().includes('opaque-value-1'));
  const line = JSON.parse(lines[0]!) as Record<string, unknown>;
  t.equal(line.api_key, '[REDACTED]');
  t.equal(line.url, 'wss://api.example/asr?api_key=[REDACTED]&lang=en', 'the rest of the URL stays readable');
  t.equal(line.msg, 'connecting');
});

t.test('bound fields: base, child and grandchild bindings', async (t) => {
  const lines: string[] = [];
  const logger = createLogger({
    pretty: false,
    base: { token: 'base-opaque-token', u: URL_WITH_KEY },
    destination: { write: (s: string) => void lines.push(s) },
  });
  const child = logger.child({ url: URL_WITH_KEY, api_key: 'child-opaque-key', mode: 'guard' });
  const grandchild = child.child({ jwt: JWT, auth: `Bearer ${KEY}` });
  logger.info('root');
  child.info('child');
  grandchild.info('grandchild');
  const text = lines.join('');
  assertClean(t, text);
  t.notOk(text.includes('base-opaque-token'));
  t.notOk(text.includes('child-opaque-key'));
  const last = JSON.parse(lines[2]!) as Record<string, unknown>;
  t.equal(last.mode, 'guard', 'non-secret bindings are inherited');
  t.equal(last.msg, 'grandchild');
});

t.test("errors: an error's message, its code, an error as the only argument, a cause", async (t) => {
  const { logger, lines, text } = capture();
  const withCode = Object.assign(new Error(`upstream refused ${KEY}`), { code: 'E_UPSTREAM' });
  logger.error({ err: withCode }, 'call failed');
  logger.error(new Error(`socket closed ${URL_WITH_KEY}`));
  logger.error({ detail: { cause: new Error(`jwt ${JWT} expired`) } }, 'nested');
  logger.error({ err: `thrown string ${TEST_KEY}` }, 'library threw a string');
  assertClean(t, text());
  const first = JSON.parse(lines[0]!) as { err: { type: string; message: string; code: string } };
  t.same(first.err, { type: 'Error', message: 'upstream refused key_live_[REDACTED]', code: 'E_UPSTREAM' }, 'the message survives, redacted');
  const second = JSON.parse(lines[1]!) as { msg: string; err: { message: string } };
  t.equal(second.msg, 'socket closed wss://api.example/asr?api_key=[REDACTED]&lang=en', 'the error message used as msg is redacted');
  t.equal(second.err.message, second.msg);
  t.notMatch(text(), /"stack"/, 'stacks are not logged');
});

t.test('readable (TTY) form is redacted too', async (t) => {
  const { logger, text } = capture(true);
  logger.child({ url: URL_WITH_KEY }).info({ key: KEY }, 'hello %s', JWT);
  t.match(text(), /hello/);
  assertClean(t, text());
});

t.test('CortexError, ConfigError and describeError messages are redacted', async (t) => {
  const e = new CortexError('upstream', `401 for ${KEY} at ${URL_WITH_KEY} with ${JWT}`);
  assertClean(t, e.message);
  t.match(e.message, /^401 for key_live_\[REDACTED\]/);
  const c = new ConfigError([{ file: 'config/x.json5', path: 'api_key', kind: 'format', message: `bad key ${TEST_KEY}` }]);
  assertClean(t, c.message);
  t.equal(c.message, 'config/x.json5: api_key: bad key key_test_[REDACTED]');
  assertClean(t, describeError(new Error(`failed ${URL_WITH_KEY}`)));
  assertClean(t, describeError(`thrown string ${JWT}`));
  assertClean(t, describeError({ url: URL_WITH_KEY, key: KEY }));
  t.equal(describeError(`x ${KEY}`), 'x key_live_[REDACTED]');
});
