// Proves the ASR stream actor: transcripts as events, the reconnect policy (at once after a healthy drop, backoff, breaker), fatal 401 and policy closes, state events with counters.
import t from 'tap';
import { SimulatedClock, createActor, setup } from 'xstate';
import { Subject, BehaviorSubject } from 'rxjs';
import { startAsrStream, asrEvents } from '../../actors/streams/asr-stream.js';
import type { StreamLink } from '../../src/cloud/link.js';
import { streamSessionLogic } from '../../actors/streams/session-machine.js';
import { CloudSocketAuthError } from '../../src/cloud/errors.js';
import { FakeLink } from '../support/fake-link.js';

const tick = () => new Promise((r) => setImmediate(r));
type Ev = { type: string; [k: string]: unknown };

const timing = {
  backoffInitialMs: 100,
  backoffMaxMs: 1000,
  connectTimeoutMs: 500,
  healthyAfterMs: 1000,
  breakerThreshold: 3,
  breakerInitialMs: 2000,
  breakerMaxMs: 8000,
  minCycleMs: 0,
  keepaliveMs: 2000,
};

function setup_(connectImpl?: (n: number) => Promise<StreamLink>, extra: Partial<typeof timing> = {}) {
  const clock = new SimulatedClock();
  const links: FakeLink[] = [];
  let calls = 0;
  const connect = async () => {
    calls += 1;
    if (connectImpl) return connectImpl(calls);
    const l = new FakeLink();
    links.push(l);
    return l;
  };
  const audio = new Subject<Buffer>();
  const stream = startAsrStream({
    connect,
    audio$: audio,
    rate: 16000,
    ringMs: 1000,
    clock,
    now: () => clock.now(),
    random: () => 1,
    timing: { ...timing, ...extra },
  });
  const events: Ev[] = [];
  for (const type of ['asr.partial', 'asr.final', 'asr.info', 'asr.error', 'asr.state', 'asr.stats', 'asr.failed', 'asr.closed'])
    stream.actor.on(type, (e) => events.push(e as never));
  const states = () => events.filter((e) => e.type === 'asr.state');
  return { clock, links, audio, stream, events, states, calls: () => calls };
}

const hello = (l: FakeLink) => l.say({ type: 'connection', message: 'Connected', clientId: 'c' });

t.test('transcripts become asr.partial / asr.final; info keeps the same socket', async (t) => {
  const { links, stream, events } = setup_();
  await tick();
  t.ok(stream.actor.getSnapshot().hasTag('streaming'));
  links[0]!.server({ type: 'message', message: { type: 'partial', asr_reply: 'hel', clientId: 'c', time: 1 } });
  links[0]!.server({ type: 'message', message: { type: 'info', message: 'Recognition session restarted', clientId: 'c' } });
  links[0]!.server({ type: 'message', message: { asr_reply: 'hello robot', clientId: 'c', time: 2 } });
  t.same(
    events.filter((e) => e.type !== 'asr.state').map((e) => [e.type, e.text ?? e.message]),
    [
      ['asr.partial', 'hel'],
      ['asr.info', 'Recognition session restarted'],
      ['asr.final', 'hello robot'],
    ],
  );
  t.equal(links.length, 1, 'no reconnect on info');
  stream.stop();
});

t.test('a healthy connection that drops reconnects at once (attempt 1); audio waits in the ring and arrives in order', async (t) => {
  const { links, audio, stream, states } = setup_();
  await tick();
  hello(links[0]!);
  audio.next(Buffer.from([1, 1]));
  links[0]!.server({ type: 'close', code: 1006, reason: '' });
  audio.next(Buffer.from([2, 2]));
  audio.next(Buffer.from([3, 3]));
  t.notOk(
    states().some((e) => e.state === 'backingOff'),
    'no wait at all',
  );
  t.match(states().at(-1), { state: 'connecting', attempt: 1, reason: /reconnecting at once: socket closed \(1006\)/ });
  await tick();
  t.equal(links.length, 2, 'reconnected without the clock moving');
  audio.next(Buffer.from([4, 4]));
  t.same(Buffer.concat(links[0]!.audio), Buffer.from([1, 1]));
  t.same(Buffer.concat(links[1]!.audio), Buffer.from([2, 2, 3, 3, 4, 4]), 'nothing lost or reordered');
  t.equal(stream.pump.stats().droppedBytes, 0);
  t.match(states().at(-1), { state: 'streaming', attempt: 1, connections: 2 });
  stream.stop();
  t.match(states().at(-1), { state: 'stopped', sent_bytes: 8, dropped_bytes: 0 });
});

t.test('a socket cut every 1.5 s, 20 times: every drop reconnects at once, nothing grows, the breaker never trips', async (t) => {
  const { clock, links, stream, states } = setup_();
  for (let i = 0; i < 20; i++) {
    await tick();
    clock.increment(1500); // open 1.5 s, no server message: healthy by age
    links[i]!.server({ type: 'close', code: 1006, reason: '' });
  }
  await tick();
  t.equal(links.length, 21);
  t.notOk(states().some((e) => e.state === 'backingOff'));
  t.ok(
    states()
      .filter((e) => e.state === 'connecting')
      .every((e) => e.attempt === 1),
  );
  t.equal(stream.actor.getSnapshot().context.connections, 21);
  stream.stop();
});

t.test('a silence-timeout close (1000) reconnects at once even right after opening', async (t) => {
  const { links, stream, states } = setup_();
  await tick();
  links[0]!.server({ type: 'close', code: 1000, reason: 'silence timeout' });
  await tick();
  t.equal(links.length, 2);
  t.notOk(states().some((e) => e.state === 'backingOff'));
  t.match(
    states()
      .filter((e) => e.state === 'connecting')
      .at(-1),
    { routine: true, reason: 'reconnecting at once: socket closed (1000 silence timeout)' },
    'the reconnect is marked routine (the view does not show it)',
  );
  t.notOk(states()[0]!.routine, 'the first connection is not');
  stream.stop();
});

t.test('a healthy server that hangs up at once is not reconnected more often than once per minCycleMs', async (t) => {
  const { clock, links, stream, states } = setup_(undefined, { minCycleMs: 1000 });
  await tick();
  hello(links[0]!);
  clock.increment(100);
  links[0]!.server({ type: 'close', code: 1011, reason: 'bye' });
  t.match(states().at(-1), { state: 'backingOff', attempt: 1, delay_ms: 900 });
  clock.increment(900);
  await tick();
  t.equal(links.length, 2);
  stream.stop();
});

t.test('401 at connect is fatal: one attempt, failed with the server text', async (t) => {
  const { stream, events, states, calls, clock } = setup_(async () => {
    throw new CloudSocketAuthError('WS /api/core/speechlab/asr', 'Invalid API key: unknown key');
  });
  await tick();
  clock.increment(100_000);
  await tick();
  t.equal(calls(), 1, 'the server is not hammered');
  t.equal(stream.actor.getSnapshot().value, 'failed');
  t.match(
    events.find((e) => e.type === 'asr.failed'),
    { reason: /Invalid API key: unknown key/ },
  );
  t.match(states().at(-1), { state: 'failed', reason: /Invalid API key: unknown key/ });
});

t.test('a policy-violation close (1008) is fatal', async (t) => {
  const { links, stream, events } = setup_();
  await tick();
  links[0]!.server({ type: 'message', message: { type: 'error', message: 'Recognition error: balance exhausted', clientId: 'c' } });
  links[0]!.server({ type: 'close', code: 1008, reason: 'balance exhausted' });
  await tick();
  t.equal(stream.actor.getSnapshot().value, 'failed');
  t.match(
    events.find((e) => e.type === 'asr.error'),
    { message: /balance exhausted/ },
  );
  t.match(
    events.find((e) => e.type === 'asr.failed'),
    { reason: /policy violation: balance exhausted/ },
  );
});

t.test('connections that die before they are healthy back off, then open the breaker, which probes after a few seconds and says so', async (t) => {
  const { clock, links, stream, states } = setup_();
  for (let i = 0; i < 5; i++) {
    await tick();
    clock.increment(10);
    links[i]!.server({ type: 'close', code: 1011, reason: 'restart' });
    clock.increment(states().at(-1)!.delay_ms as number);
  }
  const backoffs = states().filter((e) => e.state === 'backingOff');
  t.same(
    backoffs.map((e) => e.delay_ms),
    [100, 200, 2000, 4000, 8000],
    'backoff, then breaker waits of seconds, never a minute',
  );
  t.same(
    backoffs.map((e) => e.attempt),
    [2, 3, 4, 5, 6],
  );
  t.same(
    backoffs.map((e) => Boolean(e.breaker)),
    [false, false, true, true, true],
  );
  t.match(backoffs[2], {
    reason: /socket closed \(1011 restart\); 3 connections in a row closed before they were healthy: breaker open, probing again in 2\.0 s/,
  });
  await tick();
  hello(links[5]!); // the probe is healthy: the breaker closes
  clock.increment(10);
  links[5]!.server({ type: 'close', code: 1006, reason: '' });
  t.match(states().at(-1), { state: 'connecting', attempt: 1 });
  stream.stop();
});

t.test('connect failures back off to the cap and keep trying; they never trip the breaker', async (t) => {
  const { clock, stream, states, calls } = setup_((n) => (n <= 8 ? Promise.reject(new Error('ECONNREFUSED')) : Promise.resolve(new FakeLink())));
  for (let i = 0; i < 8; i++) {
    await tick();
    clock.increment(states().at(-1)!.delay_ms as number);
  }
  await tick();
  const backoffs = states().filter((e) => e.state === 'backingOff');
  t.same(
    backoffs.map((e) => e.delay_ms),
    [100, 200, 400, 800, 1000, 1000, 1000, 1000],
  );
  t.ok(backoffs.every((e) => !e.breaker && /connect failed: ECONNREFUSED/.test(String(e.reason))));
  t.equal(calls(), 9);
  t.ok(stream.actor.getSnapshot().hasTag('streaming'));
  stream.stop();
});

t.test('connect timeout backs off and retries', async (t) => {
  const { clock, stream, states, calls } = setup_((n) => (n === 1 ? new Promise(() => {}) : Promise.resolve(new FakeLink())));
  await tick();
  clock.increment(500);
  t.match(
    states().find((e) => e.state === 'backingOff'),
    { reason: /no connection within 500 ms/, delay_ms: 100, attempt: 2 },
  );
  clock.increment(100);
  await tick();
  t.equal(calls(), 2);
  t.ok(stream.actor.getSnapshot().hasTag('streaming'));
  stream.stop();
});

t.test('counters move while streaming: asr.stats on the keepalive tick; keepalive silence is metered too; stop says stopped', async (t) => {
  const { clock, links, audio, stream, events, states } = setup_();
  await tick();
  clock.increment(1000);
  audio.next(Buffer.alloc(3200));
  clock.increment(1000);
  const stats = () => events.filter((e) => e.type === 'asr.stats');
  t.equal(stats().length, 1);
  t.match(stats()[0], { state: 'streaming', sent_bytes: 3200, dropped_bytes: 0, attempt: 1, connections: 1 });
  t.ok(Math.abs((stats()[0]!.cost_cu as number) - (3200 / 32000 / 60) * 35) < 1e-6, 'cost at the speechlab price');
  clock.increment(2000); // idle for 3 s: one chunk of silence keeps the socket alive
  t.equal(links[0]!.audio.length, 2);
  t.match(stats().at(-1), { sent_bytes: 6400 });
  stream.stop();
  t.match(states().at(-1), { state: 'stopped', sent_bytes: 6400 });
  t.equal(links[0]!.closed, 1000, 'the socket is closed');
});

t.test('as a child actor: stopping the parent closes the open socket', async (t) => {
  const link = new FakeLink();
  let detached = 0;
  const parent = setup({ actors: { session: streamSessionLogic() } }).createMachine({
    invoke: {
      src: 'session',
      input: {
        prefix: 'asr',
        connect: async () => link,
        hooks: { attach: () => {}, detach: () => detached++, keepalive: () => {}, onMessage: () => [], isBenignClose: () => false },
      },
    },
  });
  const actor = createActor(parent).start();
  await tick();
  t.equal(link.closed, undefined);
  actor.stop();
  t.equal(link.closed, 1000);
  t.equal(detached, 1);
});

t.test('echo suppression mutes audio while the speaker plays; with interruption allowed, speech stops playback', async (t) => {
  const playing$ = new BehaviorSubject(false);
  let stopped = 0;
  const link = new FakeLink();
  const audio = new Subject<Buffer>();
  const muted = startAsrStream({ connect: async () => link, audio$: audio, rate: 16000, speaker: { playing$, stop: () => stopped++ } });
  await tick();
  playing$.next(true);
  audio.next(Buffer.from([9, 9]));
  t.same(link.audio.at(-1), Buffer.from([0, 0]), 'muted to silence');
  muted.stop();
  const link2 = new FakeLink();
  const audio2 = new Subject<Buffer>();
  const open = startAsrStream({
    connect: async () => link2,
    audio$: audio2,
    rate: 16000,
    speaker: { playing$, stop: () => stopped++ },
    allowInterruption: true,
  });
  await tick();
  audio2.next(Buffer.from([9, 9]));
  t.same(link2.audio.at(-1), Buffer.from([9, 9]), 'heard while speaking');
  link2.server({ type: 'message', message: { type: 'partial', asr_reply: 'stop', clientId: 'c', time: 1 } });
  t.equal(stopped, 1, 'barge-in stopped playback');
  open.stop();
});

t.test('speechb replies and error frames map to events', async (t) => {
  t.same(asrEvents({ asr_reply: 'hi' }), [{ type: 'asr.final', text: 'hi', time: undefined }]);
  t.same(asrEvents({ error: 'bad' }), [{ type: 'asr.error', message: 'bad' }]);
  t.same(asrEvents('garbage'), []);
});
