// Proves the speech-synthesis endpoints of `cortexd cloud`: real espeak-ng audio per format, error rows, vendor upstream and key override, metering.
import t from 'tap';
import { pino } from 'pino';
import { startService, type RunningService } from '../../src/service/index.js';

const silent = pino({ level: 'silent' });

function post(svc: RunningService, path: string, body: unknown, headers: Record<string, string>) {
  return fetch(svc.url + path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const isMp3 = (b: Buffer) => b.subarray(0, 3).toString() === 'ID3' || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0);

t.test('speech synthesis', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 't'.repeat(40), logger: silent, limits: { ttsChars: 100 } });
  t.teardown(() => svc.close());
  const { apiKey, info } = svc.admin.createApiKey('alice');
  const key = { 'x-api-key': apiKey };

  t.test('speechlab JSON: default mp3_44100_128', async (t) => {
    const res = await post(svc, '/speechlab/tts', { input: 'Hello from the robot.' }, key);
    t.equal(res.status, 200);
    const body = (await res.json()) as { text: string; response: string; format: string };
    t.equal(body.text, 'Hello from the robot.');
    t.equal(body.format, 'mp3_44100_128');
    const audio = Buffer.from(body.response, 'base64');
    t.ok(audio.length > 2000 && isMp3(audio), 'real mp3 audio');
    t.same(svc.admin.usage(info.id).at(-1), { kind: 'tts', item: 'speechlab/tts', quantity_in: 21, quantity_out: 0, cost_micro: 21 * 30000 });
  });

  t.test('speechlab JSON: pcm and wav formats at the requested rate', async (t) => {
    const pcm = (await (await post(svc, '/speechlab/tts', { input: 'one two three', response_format: 'pcm_16000', speed: 1.5 }, key)).json()) as {
      response: string;
      format: string;
    };
    t.equal(pcm.format, 'pcm_16000');
    const raw = Buffer.from(pcm.response, 'base64');
    t.equal(raw.length % 2, 0);
    const seconds = raw.length / 32000;
    t.ok(seconds > 0.3 && seconds < 3, `plausible duration ${seconds}s`);
    const wav = (await (await post(svc, '/speechlab/tts', { input: 'one', response_format: 'wav_22050' }, { authorization: `Bearer ${apiKey}` })).json()) as {
      response: string;
    };
    const w = Buffer.from(wav.response, 'base64');
    t.equal(w.subarray(0, 4).toString(), 'RIFF');
    t.equal(w.readUInt32LE(24), 22050, 'WAV header rate');
  });

  t.test('speechlab stream: binary mp3 with audio/mpeg', async (t) => {
    const res = await post(svc, '/speechlab/tts/audio/speech', { input: 'Streaming speech works.', voice: 'en-gb' }, key);
    t.equal(res.status, 200);
    t.equal(res.headers.get('content-type'), 'audio/mpeg');
    const audio = Buffer.from(await res.arrayBuffer());
    t.ok(audio.length > 2000 && isMp3(audio));
    const pcm = await post(svc, '/speechlab/tts/audio/speech', { input: 'raw', response_format: 'pcm_22050' }, key);
    t.equal(pcm.headers.get('content-type'), 'audio/pcm');
    t.ok((await pcm.arrayBuffer()).byteLength > 1000);
  });

  t.test('speechlab error rows', async (t) => {
    for (const path of ['/speechlab/tts', '/speechlab/tts/audio/speech']) {
      for (const bad of ['{not json', {}, { input: '' }, { input: 'x', response_format: 'ogg_9' }, { input: 'x', speed: 3 }]) {
        const res = await post(svc, path, bad, key);
        t.equal(res.status, 400, `${path} ${JSON.stringify(bad)}`);
        t.same(await res.json(), { error: 'Missing or invalid JSON in request' });
      }
      const long = await post(svc, path, { input: 'a'.repeat(101) }, key);
      t.same([long.status, await long.json()], [400, { error: 'Text too long: 101 characters, the maximum is 100' }]);
      const noKey = await post(svc, path, { input: 'x' }, {});
      t.equal(noKey.status, 401);
    }
  });

  t.test('speechb: base64 WAV, 400 without text, metered at its price', async (t) => {
    const res = await post(svc, '/api/core/speechb/tts', { text: 'Bonjour', voice: 'any', language_code: 'fr-FR' }, { authorization: `Bearer ${apiKey}` });
    t.equal(res.status, 200);
    const body = (await res.json()) as { audio: string; format: string };
    t.equal(Buffer.from(body.audio, 'base64').subarray(0, 4).toString(), 'RIFF');
    t.equal(body.format, 'wav_22050');
    t.equal(svc.admin.usage(info.id).at(-1)?.cost_micro, 7 * 10000);
    const bad = await post(svc, '/api/core/speechb/tts', { voice: 'x' }, { authorization: `Bearer ${apiKey}` });
    t.same([bad.status, await bad.json()], [400, { error: 'Missing or invalid JSON in request: text is required' }]);
  });
});

t.test('speechlab vendor upstream: 503 without a key, per-request override, unreachable vendor', async (t) => {
  const vendor = await startService({ dbPath: ':memory:', jwtSecret: 'v'.repeat(40), logger: silent });
  const vendorKey = vendor.admin.createApiKey('gateway').apiKey;
  const gw = await startService({
    dbPath: ':memory:',
    jwtSecret: 'g'.repeat(40),
    logger: silent,
    backends: { tts: { speechlab: { kind: 'upstream', baseUrl: vendor.url } } },
  });
  const dead = await startService({
    dbPath: ':memory:',
    jwtSecret: 'd'.repeat(40),
    logger: silent,
    backends: { tts: { speechlab: { kind: 'upstream', baseUrl: 'http://127.0.0.1:9', apiKey: 'k' } } },
  });
  t.teardown(async () => {
    await gw.close();
    await dead.close();
    await vendor.close();
  });
  const key = { 'x-api-key': gw.admin.createApiKey('alice').apiKey };
  for (const path of ['/speechlab/tts', '/speechlab/tts/audio/speech']) {
    const res = await post(gw, path, { input: 'hi' }, key);
    t.same([res.status, await res.json()], [503, { error: 'speechlab API key not configured' }]);
  }
  const ok = await post(gw, '/speechlab/tts', { input: 'through the vendor', speechlab_api_key: vendorKey }, key);
  t.equal(ok.status, 200);
  const body = (await ok.json()) as { response: string; format: string };
  t.ok(isMp3(Buffer.from(body.response, 'base64')));
  t.equal(vendor.admin.balance('gateway').cu_balance, 99999, 'the vendor charged its key: 18 chars = 0.54 CU, balance rounds down');
  const deadRes = await post(dead, '/speechlab/tts', { input: 'hi' }, { 'x-api-key': dead.admin.createApiKey('a').apiKey });
  t.equal(deadRes.status, 503);
  t.match(await deadRes.json(), { error: 'Failed to connect to speechlab server', details: String });
});

t.test('a vendor that drops the audio mid-body: 500 Failed to read response body', async (t) => {
  const { createServer } = await import('node:http');
  const vendor = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': '100000' });
    res.write(Buffer.alloc(1000, 1));
    setImmediate(() => res.destroy());
  });
  await new Promise<void>((r) => vendor.listen(0, '127.0.0.1', r));
  const port = (vendor.address() as { port: number }).port;
  const gw = await startService({
    dbPath: ':memory:',
    jwtSecret: 'h'.repeat(40),
    logger: silent,
    backends: { tts: { speechlab: { kind: 'upstream', baseUrl: `http://127.0.0.1:${port}`, apiKey: 'vendor-key' } } },
  });
  t.teardown(async () => {
    await gw.close();
    await new Promise<void>((r) => vendor.close(() => r()));
  });
  const { apiKey, info } = gw.admin.createApiKey('alice');
  const res = await post(gw, '/speechlab/tts', { input: 'hello' }, { 'x-api-key': apiKey });
  t.same([res.status, await res.json()], [500, { error: 'Failed to read response body' }]);
  t.same(gw.admin.usage(info.id), [], 'not charged');
});
