// Proves the three speech-synthesis endpoints return decoded audio (streamed from the first bytes) and their error rows arrive typed.
import t from 'tap';
import { TTS_DEFAULTS } from '../../src/cloud/catalog.js';
import { CloudHttp } from '../../src/cloud/http.js';
import type { RetryOptions } from '../../src/cloud/retry.js';
import { TtsClient } from '../../src/cloud/tts.js';
import { startService, type RunningService } from '../../src/service/index.js';
import { sendJson, startCloudPeer, type CloudPeer } from '../support/cloud-peer.js';

let svc: RunningService;
let broken: RunningService;
let peer: CloudPeer;
let key: string;
let brokenKey: string;

t.before(async () => {
  svc = await startService({ dbPath: ':memory:', jwtSecret: 's'.repeat(32) });
  // speechlab: an upstream without a key (503 not configured); speechb: an unreachable upstream.
  broken = await startService({
    dbPath: ':memory:',
    jwtSecret: 's'.repeat(32),
    backends: {
      tts: { speechlab: { kind: 'upstream', baseUrl: 'http://127.0.0.1:9' }, speechb: { kind: 'upstream', baseUrl: 'http://127.0.0.1:9', apiKey: 'vendor' } },
    },
  });
  peer = await startCloudPeer();
  key = svc.admin.createApiKey('robot').apiKey;
  brokenKey = broken.admin.createApiKey('robot').apiKey;
});
t.teardown(async () => {
  await svc.close();
  await broken.close();
  await peer.close();
});

function tts(baseUrl: string, apiKey: string, extra: { auth?: 'x-api-key'; speechlabApiKey?: string; retries?: number[] } = {}) {
  const retry: RetryOptions = {
    maxRetries: 2,
    baseDelayMs: 1,
    maxDelayMs: 2,
    maxRetryAfterMs: 100,
    sleep: async () => undefined,
    onRetry: ({ delayMs }) => void extra.retries?.push(delayMs),
  };
  return new TtsClient({
    http: new CloudHttp({ baseUrl, retry }),
    apiKey,
    ...(extra.auth ? { auth: extra.auth } : {}),
    ...(extra.speechlabApiKey ? { speechlabApiKey: extra.speechlabApiKey } : {}),
  });
}

const isMp3 = (b: Buffer) => (b[0] === 0x49 && b[1] === 0x44 && b[2] === 0x33) || (b[0] === 0xff && (b[1]! & 0xe0) === 0xe0);

t.test('speechlab JSON: base64 decoded, spec defaults applied', async (t) => {
  const res = await tts(svc.url, key).speechlab({ input: 'hello there' });
  t.equal(res.text, 'hello there');
  t.equal(res.format, TTS_DEFAULTS.response_format);
  t.ok(res.audio.length > 500, 'real audio bytes');
  t.ok(isMp3(res.audio), 'mp3 audio');
  t.equal(res.costCu, 1, '11 characters at 30000 CU per million, rounded up per request');
  const viaXApiKey = await tts(svc.url, key, { auth: 'x-api-key' }).speechlab({ input: 'hi', speed: 2 });
  t.ok(viaXApiKey.audio.length > 0, 'x-api-key header accepted');
});

t.test('speechlab stream: a Node Readable of audio', async (t) => {
  const res = await tts(svc.url, key).speechlabStream({ input: 'streaming speech', response_format: 'mp3_22050_32' });
  t.match(res.contentType, /audio\/mpeg/);
  const parts: Buffer[] = [];
  for await (const c of res.audio) parts.push(c as Buffer);
  t.ok(isMp3(Buffer.concat(parts)));
});

t.test('speechlab stream: the first bytes are readable before the server finishes', async (t) => {
  let finish!: () => void;
  const held = new Promise<void>((r) => (finish = r));
  peer.route('POST', '/speechlab/tts/audio/speech', async (req, res) => {
    const body = JSON.parse(req.body);
    t.same(
      { voice: body.voice, model: body.model, response_format: body.response_format, speed: body.speed, speechlab_api_key: body.speechlab_api_key },
      { voice: TTS_DEFAULTS.voice, model: TTS_DEFAULTS.model, response_format: 'mp3_44100_128', speed: 1, speechlab_api_key: 'vendor-override' },
      'defaults and the vendor-key override are sent',
    );
    t.equal(req.headers['x-api-key'], key);
    res.writeHead(200, { 'content-type': 'audio/mpeg' });
    res.write(Buffer.from([0xff, 0xfb, 0x90, 0x00]));
    await held;
    res.end(Buffer.alloc(100));
  });
  const res = await tts(peer.url, key, { auth: 'x-api-key', speechlabApiKey: 'vendor-override' }).speechlabStream({ input: 'x' });
  const first = await new Promise<Buffer>((resolve) => res.audio.once('data', resolve));
  t.same([...first.subarray(0, 2)], [0xff, 0xfb], 'first bytes arrived while the server still holds the rest');
  finish();
  res.audio.resume();
  await new Promise((r) => res.audio.once('end', r));
});

t.test('speechb: base64 audio decoded', async (t) => {
  const res = await tts(svc.url, key).speechb({ text: 'hello', voice: 'en', language_code: 'en-US' });
  t.ok(res.audio.length > 500);
});

t.test('error rows of the speech endpoints', async (t) => {
  const c = tts(svc.url, key);
  await t.rejects(c.speechlab({ input: 'x', response_format: 'flac_999' }), {
    name: 'CloudBadRequestError',
    message: '400: Missing or invalid JSON in request',
  });
  await t.rejects(c.speechlab({ input: 'x', speed: 3 }), { name: 'CloudValidationError', message: /speed/ }, 'speed range checked before sending');
  await t.rejects(c.speechlab({ input: '' }), { name: 'CloudValidationError' });
  await t.rejects(tts(svc.url, 'key_live_bogus0000000').speechlab({ input: 'x' }), { name: 'CloudAuthError', status: 401, message: /^401/ });
  await t.rejects(tts(broken.url, brokenKey).speechlab({ input: 'x' }), {
    name: 'CloudUnavailableError',
    message: '503: speechlab API key not configured',
    reason: 'key_not_configured',
  });
  await t.rejects(tts(broken.url, brokenKey).speechlabStream({ input: 'x' }), { name: 'CloudUnavailableError', reason: 'key_not_configured', message: /^503/ });
  const retries: number[] = [];
  await t.rejects(tts(broken.url, brokenKey, { retries }).speechb({ text: 'x' }), {
    name: 'CloudUnavailableError',
    reason: 'unreachable',
    message: /^503: Failed to connect to speechb server/,
  });
  t.equal(retries.length, 2, 'unreachable vendor retried to the cap');
  peer.route('POST', '/speechlab/tts', (_req, res) => sendJson(res, 500, { error: 'Failed to read response body' }));
  await t.rejects(tts(peer.url, key).speechlab({ input: 'x' }), { name: 'CloudServerError', message: '500: Failed to read response body' });
  peer.route('POST', '/speechlab/tts', (_req, res) => sendJson(res, 503, { error: 'Failed to connect to speechlab server', details: 'ECONNREFUSED' }));
  await t.rejects(tts(peer.url, key).speechlab({ input: 'x' }), {
    name: 'CloudUnavailableError',
    details: 'ECONNREFUSED',
    message: '503: Failed to connect to speechlab server (ECONNREFUSED)',
  });
  peer.route('POST', '/speechlab/tts', (_req, res) => sendJson(res, 200, { text: 'x', response: '***not base64***', format: 'mp3_44100_128' }));
  await t.rejects(tts(peer.url, key).speechlab({ input: 'x' }), { name: 'CloudProtocolError', message: /base64/ });
});
