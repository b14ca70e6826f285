// Proves the ASR stream actor: transcripts as events, reconnect without losing ring audio, backoff, breaker, fatal 401 and policy closes.
import t from 'tap';
import { SimulatedClock } from 'xstate';
import { Subject, BehaviorSubject } from 'rxjs';
import { startAsrStream, asrEvents } from '../../actors/streams/asr-stream.js';
import type { StreamLink } from '../../src/cloud/link.js';
import { CloudSocketAuthError } from '../../src/cloud/errors.js';
import { FakeLink } from '../../src/testing/fake-link.js';


const tick = () => new Promise((r) => setImmediate(r));

function setup(connectImpl?: (n: number) => Promise<StreamLink>) {
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
    timing: { backoffInitialMs: 100, backoffMaxMs: 1000, connectTimeoutMs: 500, quickFailureMs: 1000, breakerThreshold: 3, breakerCooldownMs: 60_000, keepaliveMs: 2000 },
  });
  const events: Array<{ type: string; [k: string]: unknown }> = [];
  for (const type of ['asr.partial', 'asr.final', 'asr.info', 'asr.error', 'asr.state', 'asr.failed', 'asr.closed']) stream.actor.on(type, (e) => events.push(e as never));
  return { clock, links, audio, stream, events, calls: () => calls };
}

t.test('transcripts become asr.partial / asr.final; info keeps the same socket', async (t) => {
  const { links, stream, events } = setup();
  await tick();
  t.match(stream.actor.getSnapshot().value, { streaming: 'live' });
  links[0]!.server({ type: 'message', message: { type: 'partial', asr_reply: 'hel', clientId: 'c', time: 1 } });
  links[0]!.server({ type: 'message', message: { type: 'info', message: 'Recognition session restarted', clientId: 'c' } });
  links[0]!.server({ type: 'message', message: { asr_reply: 'hello robot', clientId: 'c', time: 2 } });
  t.same(events.filter((e) => e.type !== 'asr.state').map((e) => [e.type, e.text ?? e.message]), [
    ['asr.partial', 'hel'],
    ['asr.info', 'Recognition session restarted'],
    ['asr.final', 'hello robot'],
  ]);
  t.equal(links.length, 1, 'no reconnect on info');
  stream.stop();
});

t.test('a drop mid-utterance: audio waits in the ring and arrives, in order, after the reconnect', async (t) => {
  const { clock, links, audio, stream, events } = setup();
  await tick();
  audio.next(Buffer.from([1, 1]));
  links[0]!.server({ type: 'close', code: 1006, reason: '' });
  audio.next(Buffer.from([2, 2]));
  audio.next(Buffer.from([3, 3]));
  const backoff = events.find((e) => e.type === 'asr.state' && e.state === 'backingOff');
  t.ok(backoff && (backoff.delayMs as number) >= 80 && (backoff.delayMs as number) <= 120, 'first backoff ~100 ms with jitter');
  clock.increment(200);
  await tick();
  t.equal(links.length, 2, 'reconnected');
  audio.next(Buffer.from([4, 4]));
  t.same(Buffer.concat(links[0]!.audio), Buffer.from([1, 1]));
  t.same(Buffer.concat(links[1]!.audio), Buffer.from([2, 2, 3, 3, 4, 4]), 'nothing lost or reordered');
  t.equal(stream.pump.stats().droppedBytes, 0);
  stream.stop();
});

t.test('a silence-timeout close (1000) reconnects at once, without backoff', async (t) => {
  const { links, stream, events } = setup();
  await tick();
  links[0]!.server({ type: 'close', code: 1000, reason: 'silence timeout' });
  await tick();
  t.equal(links.length, 2);
  t.notOk(events.some((e) => e.state === 'backingOff'));
  stream.stop();
});

t.test('401 at connect is fatal: one attempt, failed with the server text', async (t) => {
  const { stream, events, calls, clock } = setup(async () => {
    throw new CloudSocketAuthError('WS /api/core/speechlab/asr', 'Invalid API key: unknown key');
  });
  await tick();
  clock.increment(100_000);
  await tick();
  t.equal(calls(), 1, 'the server is not hammered');
  t.equal(stream.actor.getSnapshot().value, 'failed');
  t.match(events.find((e) => e.type === 'asr.failed'), { reason: /Invalid API key: unknown key/ });
});

t.test('a policy-violation close (1008) is fatal', async (t) => {
  const { links, stream, events } = setup();
  await tick();
  links[0]!.server({ type: 'message', message: { type: 'error', message: 'Recognition error: balance exhausted', clientId: 'c' } });
  links[0]!.server({ type: 'close', code: 1008, reason: 'balance exhausted' });
  await tick();
  t.equal(stream.actor.getSnapshot().value, 'failed');
  t.match(events.find((e) => e.type === 'asr.error'), { message: /balance exhausted/ });
  t.match(events.find((e) => e.type === 'asr.failed'), { reason: /policy violation: balance exhausted/ });
});

t.test('backoff grows and is capped; quick failures trip the breaker into a long cool-down', async (t) => {
  const { clock, links, stream, events } = setup();
  for (let i = 0; i < 3; i++) {
    await tick();
    links[i]!.server({ type: 'close', code: 1011, reason: 'restart' });
    const delay = events.filter((e) => e.state === 'backingOff').at(-1)!.delayMs as number;
    clock.increment(delay);
  }
  const delays = events.filter((e) => e.state === 'backingOff').map((e) => e.delayMs as number);
  t.ok(delays[0]! < delays[1]!, `growing: ${delays.join(', ')}`);
  t.equal(delays[2], 60_000, 'third quick failure trips the breaker');
  stream.stop();
});

t.test('connect timeout backs off and retries', async (t) => {
  const { clock, stream, events, calls } = setup((n) => (n === 1 ? new Promise(() => {}) : Promise.resolve(new FakeLink())));
  await tick();
  clock.increment(500);
  t.match(events.find((e) => e.state === 'backingOff'), { error: /no connection within 500 ms/ });
  clock.increment(200);
  await tick();
  t.equal(calls(), 2);
  t.match(stream.actor.getSnapshot().value, { streaming: 'live' });
  stream.stop();
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
  const open = startAsrStream({ connect: async () => link2, audio$: audio2, rate: 16000, speaker: { playing$, stop: () => stopped++ }, allowInterruption: true });
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
