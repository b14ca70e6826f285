// Fault tests of the ASR stream against a misbehaving ws peer: drops mid-utterance, garbage, error events, 401, policy close; byte-exact audio accounting at the peer.
import t from 'tap';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Subject } from 'rxjs';
import { WebSocketServer, type WebSocket } from 'ws';
import { startAsrStream } from '../../actors/streams/asr-stream.js';
import { linkFromAsrSession } from '../../src/cloud/link.js';
import { openSpeechlabAsr } from '../../src/cloud/sockets.js';
import { onEvent } from '../helpers/wait.js';

type Behaviour = { reject?: { status: number; body: string } };

/** A peer speaking the speechlab protocol shape; it records every audio byte per connection. */
class Peer {
  readonly wss: WebSocketServer;
  readonly connections: Array<{ ws: WebSocket; audio: Buffer[]; first: Record<string, unknown> | undefined }> = [];
  upgrades = 0;
  behaviour: Behaviour = {};
  private waiters: Array<() => void> = [];

  constructor() {
    this.wss = new WebSocketServer({
      port: 0,
      host: '127.0.0.1',
      verifyClient: (_info: { req: IncomingMessage }, cb: (ok: boolean, code?: number, message?: string, headers?: Record<string, string>) => void) => {
        this.upgrades += 1;
        const r = this.behaviour.reject;
        if (r) cb(false, r.status, r.body, { 'content-type': 'application/json' });
        else cb(true);
        this.notify();
      },
    });
    this.wss.on('connection', (ws) => {
      const conn = { ws, audio: [] as Buffer[], first: undefined as Record<string, unknown> | undefined };
      this.connections.push(conn);
      ws.send(JSON.stringify({ type: 'connection', message: 'Connected', clientId: `c${this.connections.length}` }));
      ws.on('message', (data) => {
        const msg = JSON.parse(data.toString()) as Record<string, unknown>;
        conn.first ??= msg;
        conn.audio.push(Buffer.from(String(msg.audio), 'base64'));
        this.notify();
      });
      this.notify();
    });
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as AddressInfo).port}`;
  }

  /** Every audio byte received, over all connections, in order. */
  received(): Buffer {
    return Buffer.concat(this.connections.flatMap((c) => c.audio));
  }

  latest(): WebSocket {
    return this.connections.at(-1)!.ws;
  }

  private notify(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  /** Resolves when `cond` holds (checked on every peer event), or rejects after `ms`. */
  until(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      const check = () => {
        if (cond()) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(check);
      };
      check();
    });
  }

  close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((r) => this.wss.close(() => r()));
  }
}

function start(peer: Peer, ringMs = 10_000) {
  const audio = new Subject<Buffer>();
  const stream = startAsrStream({
    rate: 16000,
    audio$: audio,
    ringMs,
    timing: { backoffInitialMs: 20, backoffMaxMs: 100, connectTimeoutMs: 2000, minCycleMs: 0, breakerThreshold: 100 },
    connect: async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: peer.url, apiKey: 'test-key', rate: 16000, languageCode: 'en', signal })),
  });
  let produced = 0;
  const chunks: Buffer[] = [];
  /** 100 ms of numbered audio (each chunk distinct, so reordering or duplication shows). */
  const speak = (n: number) => {
    for (let i = 0; i < n; i++) {
      const c = Buffer.alloc(3200, produced & 0xff);
      c.writeUInt32LE(produced);
      produced += 1;
      chunks.push(c);
      audio.next(c);
    }
  };
  return { stream, speak, all: () => Buffer.concat(chunks) };
}

t.test('drops mid-utterance: every byte produced before, during and after arrives once, in order', async (t) => {
  const peer = new Peer();
  t.teardown(() => peer.close());
  const { stream, speak, all } = start(peer);
  t.teardown(() => stream.stop());
  await onEvent(stream, 'asr.state', (e) => e.state === 'streaming');
  for (let drop = 0; drop < 3; drop++) {
    speak(5);
    await peer.until(() => peer.received().length === all().length, 'audio before the drop');
    const closed = onEvent(stream, 'asr.closed');
    peer.latest().terminate();
    await closed;
    speak(7); // while reconnecting: into the ring
    await onEvent(stream, 'asr.state', (e) => e.state === 'streaming');
  }
  speak(3);
  await peer.until(() => peer.received().length === all().length, 'all audio');
  t.ok(peer.received().equals(all()), `byte-exact over ${peer.connections.length} connections`);
  t.equal(peer.connections.length, 4);
  t.ok(
    peer.connections.every((c) => c.first?.rate === 16000 && c.first.language_code === 'en'),
    'each connection starts with rate and language',
  );
  t.equal(stream.pump.stats().droppedBytes, 0);
});

t.test('an outage longer than the ring keeps the newest audio and counts exactly what it dropped', async (t) => {
  const peer = new Peer();
  t.teardown(() => peer.close());
  const { stream, speak, all } = start(peer, 500); // 5 chunks of 100 ms
  t.teardown(() => stream.stop());
  await onEvent(stream, 'asr.state', (e) => e.state === 'streaming');
  speak(2);
  await peer.until(() => peer.received().length === 6400, 'audio before the drop');
  const closed = onEvent(stream, 'asr.closed');
  peer.latest().terminate();
  await closed;
  speak(8);
  await onEvent(stream, 'asr.state', (e) => e.state === 'streaming');
  await peer.until(() => peer.received().length === 7 * 3200, 'the ring');
  const expected = Buffer.concat([all().subarray(0, 6400), all().subarray(5 * 3200)]);
  t.ok(peer.received().equals(expected), 'the first 2 chunks, then the newest 5 of the outage');
  t.same(stream.pump.stats(), { ...stream.pump.stats(), droppedBytes: 3 * 3200, droppedChunks: 3 });
});

t.test('garbage and error events keep the session; a later transcript still arrives', async (t) => {
  const peer = new Peer();
  t.teardown(() => peer.close());
  const { stream } = start(peer);
  t.teardown(() => stream.stop());
  await onEvent(stream, 'asr.state', (e) => e.state === 'streaming');
  const invalid: unknown[] = [];
  stream.actor.on('asr.invalid', (e) => invalid.push((e as { reason?: unknown }).reason));
  const errors: unknown[] = [];
  stream.actor.on('asr.error', (e) => errors.push((e as { message?: unknown }).message));
  const ws = peer.latest();
  ws.send('{not json');
  ws.send(Buffer.from([1, 2, 3]), { binary: true });
  ws.send(JSON.stringify({ type: 'partial', asr_reply: 42 }));
  ws.send(JSON.stringify({ type: 'error', message: 'Recognition error: decoder hiccup', clientId: 'c1' }));
  const final = onEvent(stream, 'asr.final');
  ws.send(JSON.stringify({ asr_reply: 'turn left', clientId: 'c1', time: 1 }));
  t.match(await final, { text: 'turn left' });
  t.equal(invalid.length, 3, `three invalid frames reported: ${JSON.stringify(invalid)}`);
  t.same(errors, ['Recognition error: decoder hiccup']);
  t.equal(peer.connections.length, 1, 'no reconnect for garbage or a reported error');
  t.ok(stream.actor.getSnapshot().hasTag('streaming'));
});

t.test('401 at upgrade: failed with the server text after exactly one attempt', async (t) => {
  const peer = new Peer();
  t.teardown(() => peer.close());
  peer.behaviour.reject = { status: 401, body: JSON.stringify({ error: 'Invalid API key: unknown key' }) };
  const { stream } = start(peer);
  t.teardown(() => stream.stop());
  const failed = await onEvent(stream, 'asr.failed');
  t.match(failed.reason, /Invalid API key: unknown key/);
  t.notMatch(String(failed.reason), /test-key/, 'the key is not in the reason');
  t.equal(peer.upgrades, 1);
  t.equal(stream.actor.getSnapshot().status, 'done');
});

t.test('5xx at upgrade retries; the peer coming back is reached', async (t) => {
  const peer = new Peer();
  t.teardown(() => peer.close());
  peer.behaviour.reject = { status: 503, body: JSON.stringify({ error: 'busy' }) };
  const { stream } = start(peer);
  t.teardown(() => stream.stop());
  await peer.until(() => peer.upgrades >= 3, 'three attempts');
  peer.behaviour = {};
  await onEvent(stream, 'asr.state', (e) => e.state === 'streaming');
  t.equal(peer.connections.length, 1);
});

t.test('policy-violation close stops for good; a silence close (1000) reconnects at once', async (t) => {
  const peer = new Peer();
  t.teardown(() => peer.close());
  const { stream, speak, all } = start(peer);
  t.teardown(() => stream.stop());
  await onEvent(stream, 'asr.state', (e) => e.state === 'streaming');
  const backoffs: unknown[] = [];
  stream.actor.on('asr.state', (e) => (e as { state?: string }).state === 'backingOff' && backoffs.push(e));
  const reconnected = onEvent(stream, 'asr.state', (e) => e.state === 'streaming');
  peer.latest().close(1000, 'silence timeout');
  speak(2);
  await reconnected;
  await peer.until(() => peer.received().length === all().length, 'audio across the silence close');
  t.equal(backoffs.length, 0, 'no backoff for a silence close');
  const failed = onEvent(stream, 'asr.failed');
  peer.latest().close(1008, 'balance exhausted');
  t.match((await failed).reason, /policy violation: balance exhausted/);
  t.equal(peer.connections.length, 2, 'no reconnect after 1008');
});
