// Proves service addresses come from env before config, are validated with clear messages, and `embedded` binds only to a running service.
import t from 'tap';
import { bindEmbedded, DEFAULT_ADDRESSES, EMBEDDED, needsEmbedded, placeholders, readAddresses, requireResolved } from '../../src/cloud/addresses.js';
import { ConfigError } from '../../src/errors.js';

t.test('defaults are obvious placeholders', async (t) => {
  const a = readAddresses({}, {});
  t.same(a, DEFAULT_ADDRESSES);
  t.same(placeholders(a), ['base_url', 'ws_base_url', 'asr_ws_url', 'vlm_ws_url']);
});

t.test('environment wins over config; ws base follows the http base', async (t) => {
  const a = readAddresses({ base_url: 'https://cfg.example/', vlm_ws_url: 'wss://v.example/vlm' }, { CORTEX_BASE_URL: 'http://10.0.0.2:8080' });
  t.equal(a.base_url, 'http://10.0.0.2:8080');
  t.equal(a.ws_base_url, 'ws://10.0.0.2:8080', 'derived from base_url');
  t.equal(a.vlm_ws_url, 'wss://v.example/vlm');
  t.equal(readAddresses({ base_url: 'https://cfg.example/' }, {}).ws_base_url, 'wss://cfg.example');
  t.equal(readAddresses({}, { CORTEX_WS_BASE_URL: 'wss://w.example' }).ws_base_url, 'wss://w.example');
  t.equal(readAddresses({ base_url: 'https://x.example' }, { CORTEX_BASE_URL: '  ' }).base_url, 'https://x.example', 'empty env is unset');
});

t.test('embedded spreads from base_url and is bound once the service runs', async (t) => {
  const a = readAddresses({ base_url: EMBEDDED }, {});
  t.same(a, { base_url: EMBEDDED, ws_base_url: EMBEDDED, asr_ws_url: EMBEDDED, vlm_ws_url: EMBEDDED });
  t.ok(needsEmbedded(a));
  t.throws(() => requireResolved(a), ConfigError);
  const r = bindEmbedded(a, {
    url: 'http://127.0.0.1:5000',
    wsUrl: 'ws://127.0.0.1:5000',
    asrWsUrl: 'ws://127.0.0.1:5000/asr',
    vlmWsUrl: 'ws://127.0.0.1:5000/vlm',
  });
  t.equal(r.base_url, 'http://127.0.0.1:5000');
  t.equal(r.vlm_ws_url, 'ws://127.0.0.1:5000/vlm');
  const mixed = readAddresses({ base_url: EMBEDDED, vlm_ws_url: 'wss://vision.example' }, {});
  t.equal(bindEmbedded(mixed, { url: 'http://h:1', wsUrl: 'ws://h:1', asrWsUrl: 'ws://h:1/asr', vlmWsUrl: 'ws://h:1/vlm' }).vlm_ws_url, 'wss://vision.example');
  t.notOk(needsEmbedded(readAddresses({}, {})));
});

t.test('bad values: every problem listed, with where it came from', async (t) => {
  const err = (() => {
    try {
      readAddresses({ base_url: 'ws://wrong', asr_ws_url: 'not a url' }, { CORTEX_VLM_WS_URL: 'https://v.example/?api_key=key_live_abc' });
    } catch (e) {
      return e as ConfigError;
    }
    throw new Error('no error');
  })();
  t.ok(err instanceof ConfigError);
  t.same(
    err.issues.map((i) => i.path),
    ['service.base_url', 'service.asr_ws_url', 'CORTEX_VLM_WS_URL'],
  );
  t.match(err.issues[0]?.message, /scheme ws is not allowed here \(expected http or https/);
  t.match(err.issues[1]?.message, /not a URL/);
  t.notMatch(err.message, 'key_live_abc', 'no secret in the message');
});
