// Proves the three sockets speak the spec's messages with the local service, and that upgrade failures become typed, redacted errors.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { CloudSocketAuthError, CloudSocketError } from '../../src/cloud/errors.js';
import { isFinalTranscript } from '../../src/cloud/protocol.js';
import { openSocket, type CloudSocket } from '../../src/cloud/socket.js';
import { openSpeechbAsr, openSpeechlabAsr, openVision, type AsrSession } from '../../src/cloud/sockets.js';
import { AsrServerMessageSchema } from '../../src/cloud/protocol.js';
import { startService, type RunningService } from '../../src/service/index.js';
import { startCloudPeer, type CloudPeer } from '../support/cloud-peer.js';

let svc: RunningService;
let peer: CloudPeer;
let key: string;
let speech: Buffer; // "turn left", s16le mono 22050 Hz
let jpeg: Buffer;
const dir = mkdtempSync(join(tmpdir(), 'cortex-sockets-'));

t.before(async () => {
  svc = await startService({ dbPath: ':memory:', jwtSecret: 's'.repeat(32) });
  peer = await startCloudPeer();
  key = svc.admin.createApiKey('robot').apiKey;
  execFileSync('espeak-ng', ['-w', join(dir, 'say.wav'), 'turn left']);
  execFileSync('sox', [join(dir, 'say.wav'), '-r', '22050', '-e', 'signed', '-b', '16', '-c', '1', '-t', 'raw', join(dir, 'say.raw')]);
  speech = readFileSync(join(dir, 'say.raw'));
  execFileSync('ffmpeg', ['-loglevel', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc=size=320x240', '-frames:v', '1', join(dir, 'f.jpg')]);
  jpeg = readFileSync(join(dir, 'f.jpg'));
});
t.teardown(async () => {
  await svc.close();
  await peer.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Resolves with the first message matching `pred`, or rejects after `ms`. */
function next<In>(session: { socket: CloudSocket<never, In> }, pred: (m: In) => boolean, ms = 20_000): Promise<In> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no matching message in time')), ms);
    const on = (m: In) => {
      if (!pred(m)) return;
      clearTimeout(timer);
      session.socket.off('message', on);
      resolve(m);
    };
    session.socket.on('message', on);
  });
}

/** Sends speech then a second of silence in 100 ms messages. */
function speak(session: AsrSession<unknown>, rate: number): void {
  const step = (rate * 2) / 10;
  const audio = Buffer.concat([speech, Buffer.alloc(rate * 2 * 1.5)]);
  for (let i = 0; i < audio.length; i += step) session.sendAudio(audio.subarray(i, i + step));
}

t.test('speechlab ASR: connection, first message with rate, committed transcript', async (t) => {
  const session = await openSpeechlabAsr({ wsBaseUrl: svc.wsUrl, apiKey: key, rate: 22050, languageCode: 'en' });
  t.teardown(() => session.close());
  t.notMatch(session.socket.url, key, 'the logged url has no key');
  t.match(session.socket.url, 'api_key=[REDACTED]');
  const hello = await next(session, (m) => 'type' in m && m.type === 'connection');
  t.type((hello as { clientId: string }).clientId, 'string');
  const final = next(session, isFinalTranscript);
  speak(session as AsrSession<unknown>, 22050);
  const got = (await final) as { asr_reply: string; clientId: string; time: number };
  t.match(got.asr_reply, /left/);
  t.equal(got.clientId, (hello as { clientId: string }).clientId);
  t.type(got.time, 'number');
});

t.test('speechlab ASR under /api/core/v1/', async (t) => {
  const session = await openSpeechlabAsr({ wsBaseUrl: svc.wsUrl, apiKey: key, v1: true });
  t.teardown(() => session.close());
  t.equal(session.socket.endpoint, 'WS /api/core/v1/speechlab/asr');
  const hello = await next(session, (m) => 'type' in m && m.type === 'connection');
  t.ok(hello);
});

t.test('second ASR socket: {asr_reply}', async (t) => {
  const session = await openSpeechbAsr({ asrWsUrl: svc.asrWsUrl, apiKey: key, rate: 22050, languageCode: 'en-US' });
  t.teardown(() => session.close());
  const reply = next(session, (m) => 'asr_reply' in m);
  speak(session as AsrSession<unknown>, 22050);
  t.match(((await reply) as { asr_reply: string }).asr_reply, /left/);
});

t.test('vision socket: a frame in, a reply out', async (t) => {
  const session = await openVision({ vlmWsUrl: svc.vlmWsUrl, apiKey: key });
  t.teardown(() => session.close());
  const reply = next(session, () => true);
  t.ok(session.sendFrame(jpeg, Date.now() / 1000));
  const got = await reply;
  t.ok('vlm_reply' in got, `reply: ${JSON.stringify(got)}`);
});

t.test('401 at the upgrade is a fatal typed error with the server message, key redacted', async (t) => {
  await t.rejects(openSpeechlabAsr({ wsBaseUrl: svc.wsUrl, apiKey: '' }), {
    name: 'CloudSocketAuthError',
    status: 401,
    fatal: true,
    serverMessage: /^Missing API key\. Please connect with \?api_key=/,
  });
  const bad = 'key_live_thisisnotavalidkey123';
  const err = await openVision({ vlmWsUrl: svc.vlmWsUrl, apiKey: bad }).catch((e: unknown) => e);
  t.ok(err instanceof CloudSocketAuthError);
  t.match((err as CloudSocketAuthError).serverMessage, /^Invalid API key/);
  t.notMatch((err as Error).message, bad);
  await t.rejects(openSpeechbAsr({ asrWsUrl: svc.asrWsUrl, apiKey: bad }), { name: 'CloudSocketAuthError', status: 401 });
});

t.test('other upgrade failures: 5xx retryable, non-JSON bodies, refused connections, abort', async (t) => {
  peer.onUpgrade('/x', () => ({ reject: { status: 503, body: 'busy' } }));
  await t.rejects(openVision({ vlmWsUrl: `${peer.wsUrl}/x`, apiKey: key }), { name: 'CloudSocketError', status: 503, fatal: false, serverMessage: 'busy' });
  peer.onUpgrade('/y', () => ({ reject: { status: 401, body: 'nope' } }));
  await t.rejects(openVision({ vlmWsUrl: `${peer.wsUrl}/y`, apiKey: key }), { name: 'CloudSocketAuthError', serverMessage: 'nope' });
  t.equal(peer.upgrades.at(-1)?.query.get('api_key'), key, 'the key travels in the query');
  const refused = await openVision({ vlmWsUrl: 'ws://127.0.0.1:9/vlm', apiKey: key }).catch((e: unknown) => e);
  t.ok(refused instanceof CloudSocketError && !refused.fatal, 'refused is not fatal');
  t.notMatch((refused as Error).message, key);
  peer.onUpgrade('/slow', () => ({ accept: () => undefined }));
  const ac = new AbortController();
  ac.abort(new Error('stopped'));
  await t.rejects(openVision({ vlmWsUrl: `${peer.wsUrl}/slow`, apiKey: key, signal: ac.signal }), { message: 'stopped' });
});

t.test('messages outside the protocol are reported apart, never as typed messages', async (t) => {
  peer.onUpgrade('/asr-junk', () => ({
    accept: (ws) => {
      ws.send('not json');
      ws.send(JSON.stringify({ type: 'partial' }));
      ws.send(JSON.stringify({ type: 'info', message: 'session restarted', clientId: 'c' }));
    },
  }));
  const socket = await openSocket({ url: `${peer.wsUrl}/asr-junk`, apiKey: key, inbound: AsrServerMessageSchema });
  t.teardown(() => socket.close());
  const invalid: string[] = [];
  socket.on('invalid', (raw) => invalid.push(raw));
  const msg = await new Promise((resolve) => socket.once('message', resolve));
  t.same(msg, { type: 'info', message: 'session restarted', clientId: 'c' });
  t.same(invalid, ['not json', '{"type":"partial"}']);
  const closed = new Promise<number>((resolve) => socket.once('close', (code) => resolve(code)));
  socket.close(1000);
  t.equal(await closed, 1000);
  t.notOk(socket.send({ audio: '' }), 'send after close is refused');
});

t.test('bad first-message fields are refused before connecting', async (t) => {
  const before = peer.upgrades.length;
  await t.rejects(openSpeechlabAsr({ wsBaseUrl: peer.wsUrl, apiKey: key, rate: 12000 as 16000 }), { name: 'CloudValidationError', message: /rate/ });
  t.equal(peer.upgrades.length, before);
});

t.test('the first ASR message carries rate and language_code, later ones only audio', async (t) => {
  const received: unknown[] = [];
  let gotThree!: () => void;
  const three = new Promise<void>((r) => (gotThree = r));
  peer.onUpgrade('/api/core/speechlab/asr', () => ({
    accept: (ws) =>
      ws.on('message', (m) => {
        received.push(JSON.parse(String(m)));
        if (received.length === 3) gotThree();
      }),
  }));
  const session = await openSpeechlabAsr({ wsBaseUrl: peer.wsUrl, apiKey: key, rate: 8000 });
  t.teardown(() => session.close());
  session.sendAudio(Buffer.from([1, 0, 2, 0]));
  session.sendAudio(Buffer.from([3, 0]));
  session.sendAudio('BAA=');
  await three;
  t.same(received, [{ audio: 'AQACAA==', rate: 8000, language_code: 'auto' }, { audio: 'AwA=' }, { audio: 'BAA=' }]);
});
