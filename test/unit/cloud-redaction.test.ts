// Proves API keys and JWTs never appear in the client's errors, logged socket URLs or request descriptions.
import t from 'tap';
import { ChatClient } from '../../src/cloud/chat.js';
import { CloudHttpError, CloudNetworkError, CloudSocketAuthError, httpErrorFrom } from '../../src/cloud/errors.js';
import { CloudHttp } from '../../src/cloud/http.js';
import { NO_RETRY } from '../../src/cloud/retry.js';
import { endpointOf, redactUrl, withApiKey } from '../../src/cloud/socket.js';

const KEY = 'key_live_S3cretS3cretS3cret';
const JWT = 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhZGEifQ.c2lnbmF0dXJl';

t.test('socket URLs: the key is added for dialing and redacted for display', async (t) => {
  const dial = withApiKey('wss://h.example/api/core/speechlab/asr', KEY);
  t.match(dial, KEY);
  t.equal(redactUrl(dial), 'wss://h.example/api/core/speechlab/asr?api_key=[REDACTED]');
  t.equal(endpointOf(dial), 'WS /api/core/speechlab/asr');
});

t.test('server messages echoing a secret are redacted in typed errors', async (t) => {
  const e = httpErrorFrom(401, 'POST /x', JSON.stringify({ error: `Invalid API key: ${KEY}` }));
  t.ok(e instanceof CloudHttpError);
  t.notMatch(e.message, KEY);
  t.notMatch(e.serverMessage, KEY);
  const s = new CloudSocketAuthError('WS /vlm', `Invalid API key: ${KEY} (token ${JWT})`);
  t.notMatch(s.message + s.serverMessage, KEY);
  t.notMatch(s.message + s.serverMessage, JWT);
});

t.test('a failed request names the endpoint, never the credential', async (t) => {
  const seen: RequestInit[] = [];
  const fetchImpl = (async (_u: unknown, init?: RequestInit) => {
    seen.push(init ?? {});
    throw new TypeError(`fetch failed for Bearer ${KEY}`, { cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) });
  }) as typeof fetch;
  const chat = new ChatClient({ http: new CloudHttp({ baseUrl: 'http://h.test', fetch: fetchImpl, retry: NO_RETRY }), apiKey: KEY });
  const err = await chat.create('provider_a', { model: 'gen-4o', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
  t.ok(err instanceof CloudNetworkError);
  t.equal((err as CloudNetworkError).causeCode, 'ECONNREFUSED');
  t.equal((err as Error).message, 'POST /api/core/provider_a/chat/completions: connection failed (ECONNREFUSED)');
  t.equal((seen[0]?.headers as Record<string, string> | undefined)?.authorization, `Bearer ${KEY}`, 'the key does go in the header');
  t.notMatch(JSON.stringify(err), KEY);
});
