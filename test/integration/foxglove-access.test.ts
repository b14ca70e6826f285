// The live Foxglove socket on port 0: nothing without the token (not for another local user either), no foreign Origin or Host, and a Foxglove client with ?token= gets the channels.
import t, { type Test } from 'tap';
import foxglove from '@foxglove/ws-protocol';
import WebSocket from 'ws';
import { FoxgloveLive } from '../../src/record/foxglove.js';
import { eventChannel } from '../../src/record/channels.js';
import { runAsStranger, strangerUser } from '../helpers/stranger.js';

const { FoxgloveClient } = foxglove;
// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(120_000);

const TOKEN = 'Xk2-pQ9_vR4mT7wZs1nB8cY3';

/** The status of an upgrade with these headers: 101 when it opened (then closed), else the refusal's status. */
function upgrade(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, [FoxgloveClient.SUPPORTED_SUBPROTOCOL], { headers });
    ws.once('open', () => (ws.close(), resolve(101)));
    ws.once('unexpected-response', (_req, res) => (res.resume(), resolve(res.statusCode ?? 0)));
    ws.once('error', reject);
  });
}

async function started(t: Test) {
  const live = await FoxgloveLive.start({ port: 0, token: TOKEN });
  t.teardown(() => live.close());
  return live;
}

t.test('the socket refuses a client without the token, with a wrong one, or from a foreign page, and serves Foxglove with ?token=', async (t) => {
  const live = await started(t);
  t.equal(await upgrade(live.url), 401, 'no token: 401');
  t.equal(await upgrade(`${live.url}/?token=wrong-wrong-wrong-wrong`), 401, 'a wrong token: 401');
  t.equal(await upgrade(`${live.url}/?token=${TOKEN}`, { origin: 'http://evil.example' }), 403, 'another site in the browser: 403 even with the token');
  t.equal(await upgrade(`${live.url}/?token=${TOKEN}`, { host: 'rebound.example:8765' }), 403, 'a rebound DNS name as Host: 403');
  t.equal(await upgrade(live.url, { authorization: `Bearer ${TOKEN}` }), 101, 'a script with Authorization: Bearer opens it');
  t.equal(await upgrade(`${live.url}/?token=${TOKEN}`, { origin: 'https://app.foxglove.dev' }), 101, "Foxglove's web app with the token opens it");

  const client = new FoxgloveClient({ ws: new WebSocket(`${live.url}/?token=${encodeURIComponent(TOKEN)}`, [FoxgloveClient.SUPPORTED_SUBPROTOCOL]) });
  t.teardown(() => client.close());
  const spec = eventChannel('tick');
  const got = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no message in 20 s')), 20_000);
    client.on('advertise', (channels) => {
      for (const c of channels) if (c.topic === spec.topic) client.subscribe(c.id);
    });
    client.on('message', ({ data }) => (clearTimeout(timer), resolve(Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('utf8'))));
  });
  // Published until the subscription is in: the channel is advertised on its first message.
  const pump = setInterval(() => live.publish(spec, () => ({ type: 'tick', n: 1 }), Date.now()), 50);
  t.teardown(() => clearInterval(pump));
  t.match(JSON.parse(await got), { type: 'tick' }, 'a client with the token receives the channel');
});

t.test('another local user gets nothing from the socket without the token', async (t) => {
  const user = strangerUser();
  if (!user) {
    t.comment('not root (or no setpriv): the check with another user is left out');
    return;
  }
  const live = await started(t);
  const port = new URL(live.url).port;
  // node: built-ins only: a raw upgrade asking for Foxglove's subprotocol, without and with a guessed token.
  const script = String.raw`
import { connect } from 'node:net';
const port = Number(process.argv[2]);
const status = (path) => new Promise((resolve) => {
  const s = connect(port, '127.0.0.1', () => s.write('GET ' + path + ' HTTP/1.1\r\nHost: 127.0.0.1:' + port + '\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: foxglove.websocket.v1\r\n\r\n'));
  let got = '';
  s.on('data', (d) => { got += d; if (got.includes('\r\n')) { s.destroy(); resolve(Number(got.split(' ')[1])); } });
  s.on('error', () => resolve(0));
});
console.log(JSON.stringify({ type: 'done', uid: process.getuid(), none: await status('/'), guessed: await status('/?token=guessed-guessed-guessed') }));
process.exit(0);
`;
  const stranger = runAsStranger(user, script, [port]);
  t.teardown(() => stranger.stop());
  const out = await stranger.line<{ uid: number; none: number; guessed: number }>('done');
  t.equal(out.uid, user.uid, 'it really was another user');
  t.equal(out.none, 401, 'no token: refused');
  t.equal(out.guessed, 401, 'a guessed token: refused');
});
