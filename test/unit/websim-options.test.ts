// WebSim's bind rule and request checks: what counts as loopback, where the token comes from, token/Host/Origin decisions.
import t from 'tap';
import { isLoopbackHost, resolveWebSimOptions, TOKEN_ENV } from '../../src/websim/options.js';
import { checkOrigin, checkToken, hostName, secretEquals, SESSION_COOKIE, sessionValue } from '../../src/websim/auth.js';
import { redactedConfig } from '../../src/websim/meta.js';

const TOKEN = 'a-long-enough-token-1234';

t.test('loopback means 127.0.0.0/8, ::1 and localhost; wildcards, other names and subdomains of localhost are not', async (t) => {
  for (const h of ['127.0.0.1', '127.0.0.2', '127.255.0.9', '::1', '[::1]', '::ffff:127.0.0.1', 'localhost', 'LOCALHOST']) t.ok(isLoopbackHost(h), h);
  for (const h of ['0.0.0.0', '::', '10.0.0.5', '192.168.1.2', '::ffff:10.0.0.1', 'robot.local', 'localhost.example.com', '128.0.0.1', 'pip.localhost'])
    t.notOk(isLoopbackHost(h), h);
});

t.test('defaults: 127.0.0.1:8000, no token', async (t) => {
  t.same(resolveWebSimOptions({}, {}), { host: '127.0.0.1', port: 8000, token: undefined, loopback: true, nextFree: true });
  t.same(resolveWebSimOptions(undefined, {}), { host: '127.0.0.1', port: 8000, token: undefined, loopback: true, nextFree: true });
});

t.test('a non-loopback host needs a token from the config or the environment', async (t) => {
  t.throws(() => resolveWebSimOptions({ host: '0.0.0.0' }, {}), { code: 'websim_unsafe_bind', message: /refuses to bind 0\.0\.0\.0.*CORTEX_WEBSIM_TOKEN/ });
  t.match(resolveWebSimOptions({ host: '0.0.0.0', token: TOKEN }, {}), { host: '0.0.0.0', token: TOKEN, loopback: false });
  t.match(resolveWebSimOptions({ host: '0.0.0.0' }, { [TOKEN_ENV]: TOKEN }), { token: TOKEN });
  t.match(resolveWebSimOptions({ token: TOKEN }, { [TOKEN_ENV]: 'another-long-token-5678' }), { token: TOKEN }, 'the config wins over the env');
  t.match(resolveWebSimOptions({}, { [TOKEN_ENV]: '' }), { token: undefined }, 'an empty env token is no token');
});

t.test('weak or malformed settings are refused, never ignored', async (t) => {
  t.throws(() => resolveWebSimOptions({ token: 'short' }, {}), { code: 'websim_config', message: /token: a WebSim token needs at least 16/ });
  t.throws(() => resolveWebSimOptions({ host: '0.0.0.0' }, { [TOKEN_ENV]: 'short' }), { code: 'websim_token' });
  t.throws(() => resolveWebSimOptions({ port: 70000 }, {}), { code: 'websim_config', message: /port/ });
  t.throws(() => resolveWebSimOptions({ host: '' }, {}), { code: 'websim_config', message: /host/ });
});

t.test('token checks: open without a token; header, bearer, query or session cookie with one', async (t) => {
  const url = (q = '') => new URL(`http://127.0.0.1:8000/x${q}`);
  t.match(checkToken({}, url(), undefined), { ok: true, via: 'open' });
  t.match(checkToken({}, url(), TOKEN), { ok: false });
  t.match(checkToken({ authorization: `Bearer ${TOKEN}` }, url(), TOKEN), { ok: true, via: 'header' });
  t.match(checkToken({ authorization: `Basic ${TOKEN}` }, url(), TOKEN), { ok: false });
  t.match(checkToken({ 'x-websim-token': TOKEN }, url(), TOKEN), { ok: true, via: 'header' });
  t.match(checkToken({}, url(`?token=${TOKEN}`), TOKEN), { ok: true, via: 'query' });
  t.match(checkToken({}, url(`?token=${TOKEN}x`), TOKEN), { ok: false }, 'a longer token is wrong');
  t.match(checkToken({}, url(`?token=${TOKEN.slice(0, -1)}`), TOKEN), { ok: false }, 'a prefix is wrong');
  t.match(checkToken({ cookie: `a=b; ${SESSION_COOKIE}=${sessionValue(TOKEN)}` }, url(), TOKEN), { ok: true, via: 'cookie' });
  t.match(checkToken({ cookie: `${SESSION_COOKIE}=${TOKEN}` }, url(), TOKEN), { ok: false }, 'the raw token is not a session');
  t.match(checkToken({ cookie: `${SESSION_COOKIE}=${sessionValue('another-token-of-length')}` }, url(), TOKEN), { ok: false }, 'a session of another token');
  t.ok(secretEquals('abc', 'abc'));
  t.notOk(secretEquals('abc', 'abcd'));
});

t.test('Host and Origin: same-origin pages and originless clients pass; rebound names and other sites do not', async (t) => {
  t.equal(hostName('127.0.0.1:8000'), '127.0.0.1');
  t.equal(hostName('[::1]:8000'), '::1');
  t.equal(hostName('localhost'), 'localhost');
  t.match(checkOrigin({ host: '127.0.0.1:8000' }, true), { ok: true });
  t.match(checkOrigin({ host: 'localhost:8000', origin: 'http://localhost:8000' }, true), { ok: true });
  t.match(checkOrigin({ host: 'evil.example:8000' }, true), { ok: false, reason: /not a loopback name/ });
  t.match(checkOrigin({ host: 'robot.lan:8000' }, false), { ok: true }, 'a non-loopback bind accepts its own names (the token guards it)');
  t.match(checkOrigin({ host: '127.0.0.1:8000', origin: 'http://evil.example' }, true), { ok: false, reason: /cross-origin/ });
  t.match(checkOrigin({ host: '127.0.0.1:8000', origin: 'http://127.0.0.1:9000' }, true), { ok: false }, 'another port is another origin');
  t.match(checkOrigin({ host: '127.0.0.1:8000', origin: 'null' }, true), { ok: false });
  t.match(checkOrigin({}, true), { ok: false, reason: /Host/ });
});

t.test('the config sent to the page has secret fields, secret shapes and every MCP env/header value masked', async (t) => {
  const config = {
    api_key: 'openmind_free',
    system_governance: 'call with key_live_abcdefghijklmnop',
    modes: { a: { mcp_servers: [{ name: 's', env: { DB_PASS: 'p4ss' }, headers: { 'X-Thing': 'v4lue' }, url: 'http://h/sse?token=t0ken' }] } },
  } as unknown as Parameters<typeof redactedConfig>[0];
  const text = JSON.stringify(redactedConfig(config));
  for (const secret of ['openmind_free', 'abcdefghijklmnop', 'p4ss', 'v4lue', 't0ken']) t.notMatch(text, secret, secret);
  t.match(text, /"DB_PASS":"\[REDACTED\]"/, 'names stay readable');
  t.equal((config as unknown as { api_key: string }).api_key, 'openmind_free', 'the agent config itself is untouched');
});
