// Proves the recognition sockets of `cortexd cloud`: 401 bodies, connection, a real espeak-ng utterance transcribed, errors, restart info, silence close, metering.
import t from 'tap';
import { pino } from 'pino';
import { startService } from '../../src/service/index.js';
import { asrCostMicro } from '../../src/service/metering.js';
import { connect, refusedUpgrade, sendPcm, speechPcm, streamPcm } from '../fixtures/service/ws-client.js';

const silent = pino({ level: 'silent' });

t.test('recognition sockets', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'a'.repeat(40), logger: silent, limits: { asrSilenceMs: 20_000 } });
  t.teardown(() => svc.close());
  const { apiKey, info } = svc.admin.createApiKey('alice');
  const speechlab = `${svc.wsUrl}/api/core/speechlab/asr`;

  t.test('401 bodies on every socket', async (t) => {
    for (const url of [speechlab, `${svc.wsUrl}/api/core/v1/speechlab/asr`, svc.asrWsUrl, svc.vlmWsUrl]) {
      t.same(await refusedUpgrade(url), { status: 401, body: { error: 'Missing API key. Please connect with ?api_key=<API_KEY>' } });
      t.same(await refusedUpgrade(`${url}?api_key=key_live_nope`), { status: 401, body: { error: 'Invalid API key: malformed key' } });
      t.same(await refusedUpgrade(`${url}?api_key=${apiKey.slice(0, -1)}${apiKey.endsWith('x') ? 'y' : 'x'}`), {
        status: 401,
        body: { error: 'Invalid API key: key not recognised' },
      });
    }
    t.same(await refusedUpgrade(`${svc.wsUrl}/api/core/elsewhere?api_key=${apiKey}`), { status: 404, body: { error: 'Not found: /api/core/elsewhere' } });
  });

  t.test('a real utterance comes back as a committed transcript, metered by bytes', async (t) => {
    const c = await connect(`${svc.wsUrl}/api/core/v1/speechlab/asr?api_key=${apiKey}`);
    const hello = await c.next((m) => m.type === 'connection');
    t.type(hello.clientId, 'string');
    t.type(hello.message, 'string');
    const pcm = Buffer.concat([speechPcm('hello robot how are you', 16000), Buffer.alloc(32000)]);
    sendPcm(c, pcm, 16000);
    const final = await c.next((m) => typeof m.asr_reply === 'string' && m.type === undefined);
    t.equal(final.asr_reply, 'hello robot how are you');
    t.equal(final.clientId, hello.clientId);
    t.ok(typeof final.time === 'number' && Math.abs((final.time as number) - Date.now()) < 60_000, 'time in ms');
    const charged = svc.admin.usage(info.id).reduce((s, r) => s + r.cost_micro, 0);
    t.equal(charged, asrCostMicro('speechlab', pcm.length, 16000), 'exactly bytes / (rate * 2) seconds at 35 CU/min');
    const partials = c.messages.filter((m) => m.type === 'partial');
    for (const p of partials) t.match(p, { asr_reply: String, clientId: hello.clientId, time: Number });
    c.ws.close();
  });

  t.test('live-paced speech gets partials before the committed transcript', async (t) => {
    const c = await connect(`${speechlab}?api_key=${apiKey}`);
    await streamPcm(c, Buffer.concat([speechPcm('hello robot how are you what is your name', 16000), Buffer.alloc(32000)]), 16000);
    const final = await c.next((m) => typeof m.asr_reply === 'string' && m.type === undefined);
    t.equal(final.asr_reply, 'hello robot how are you what is your name');
    const partials = c.messages.filter((m) => m.type === 'partial');
    t.ok(partials.length >= 1, `partials: ${JSON.stringify(partials.map((p) => p.asr_reply))}`);
    t.ok(c.messages.indexOf(partials[0]!) < c.messages.indexOf(final), 'partials come first');
    c.ws.close();
  });

  t.test('8 kHz audio is resampled and recognised', async (t) => {
    const c = await connect(`${speechlab}?api_key=${apiKey}`);
    sendPcm(c, Buffer.concat([speechPcm('turn left', 8000), Buffer.alloc(16000)]), 8000);
    t.equal((await c.next((m) => typeof m.asr_reply === 'string' && m.type === undefined)).asr_reply, 'turn left');
    c.ws.close();
  });

  t.test('bad messages are error events; a bad rate closes the session', async (t) => {
    const c = await connect(`${speechlab}?api_key=${apiKey}`);
    c.send({ audio: '', rate: 16000 });
    c.ws.send('not json');
    t.match(await c.next((m) => m.type === 'error'), { message: 'Recognition error: message is not valid JSON', clientId: String });
    c.send({ nope: 1 });
    t.match(await c.next((m) => m.type === 'error' && String(m.message).includes('invalid message')), { message: /^Recognition error: invalid message/ });
    t.equal(c.ws.readyState, c.ws.OPEN, 'still connected');
    c.ws.close();

    const d = await connect(`${speechlab}?api_key=${apiKey}`);
    d.send({ audio: '', rate: 12345 });
    t.match(await d.next((m) => m.type === 'error'), { message: /^Recognition error: unsupported sample rate 12345/ });
    t.equal((await d.closed).code, 1008);
  });

  t.test('second socket: only {asr_reply}', async (t) => {
    const c = await connect(`${svc.asrWsUrl}?api_key=${apiKey}`);
    sendPcm(c, Buffer.concat([speechPcm('stop', 16000), Buffer.alloc(32000)]), 16000);
    const reply = await c.next((m) => 'asr_reply' in m);
    t.same(reply, { asr_reply: 'stop' });
    t.same(c.messages, [{ asr_reply: 'stop' }], 'no connection or other messages');
    c.ws.close();
  });
});

t.test('session restart info and silence timeout (short limits)', async (t) => {
  const svc = await startService({
    dbPath: ':memory:',
    jwtSecret: 'b'.repeat(40),
    logger: silent,
    limits: { asrSessionMs: 150, asrSilenceMs: 600 },
  });
  t.teardown(() => svc.close());
  const { apiKey } = svc.admin.createApiKey('bob');
  const c = await connect(`${svc.wsUrl}/api/core/speechlab/asr?api_key=${apiKey}`);
  const hello = await c.next((m) => m.type === 'connection');
  t.same(await c.next((m) => m.type === 'info'), { type: 'info', message: 'Recognition session restarted', clientId: hello.clientId });
  sendPcm(c, Buffer.alloc(32000), 16000);
  t.same(await c.closed, { code: 1000, reason: 'silence timeout' });
});

t.test('balance exhausted: refused at connect (402)', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'c'.repeat(40), logger: silent });
  t.teardown(() => svc.close());
  const { apiKey } = svc.admin.createApiKey('carol');
  svc.admin.setCredits('carol', { monthlyUnused: 0 });
  const r = await refusedUpgrade(`${svc.wsUrl}/api/core/speechlab/asr?api_key=${apiKey}`);
  t.equal(r.status, 402);
  t.match(r.body, { error: /^Insufficient CU balance/ });
});
