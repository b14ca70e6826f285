// Fault tests of the ASR and VLM streams against the real local service behind the scripted faulty peer: cuts, garbage and errors, info restarts, 401, 1008, and chat 503/429.
import t, { type Test } from 'tap';
import { requireResolved } from '../../src/cloud/addresses.js';
import { createCloudClient } from '../../src/cloud/client.js';
import { startService } from '../../src/service/index.js';
import { createLogger } from '../../src/log.js';
import { startFaultProxy, seededRandom } from '../support/fault-proxy.js';
import { auditCounterAudio, startRig, type Ev, type Rig } from '../helpers/stream-rig.js';
import { onEvent } from '../helpers/wait.js';

// Seven rigs of real sockets and a service, each waiting for several cuts: over tap's 120 s default on a loaded machine.
t.setTimeout(300_000);

const count = (events: Ev[], type: string) => events.filter((e) => e.type === type).length;

/** Stops both streams and waits until the proxy saw every socket end, so everything sent has been counted. */
async function settle(rig: Rig): Promise<void> {
  rig.asr.stop();
  rig.vlm.stop();
  await rig.proxy.until(() => {
    const s = rig.proxy.stats().sockets;
    return s.speechlab.closed === s.speechlab.opened && s.vlm.closed === s.vlm.opened;
  }, 'every socket closed at the proxy');
}

/**
 * Waits until audio reached the service after the latest cut of the recognition socket. Audio lost in a
 * cut shows as a gap only when later audio follows it; stopping right after a cut would leave that
 * loss at the end, where the audit cannot see it.
 */
async function audioAfterLastCut(rig: Rig): Promise<void> {
  const at = () => ({ cuts: rig.proxy.stats().sockets.speechlab.cut, bytes: rig.proxy.stats().audioBytes });
  let mark = at();
  await rig.proxy.until(
    () => {
      const now = at();
      if (now.cuts !== mark.cuts) mark = now;
      return now.bytes > mark.bytes;
    },
    'audio after the latest cut',
    30_000,
  );
}

/** Audio at the service is the microphone's, in order: no repeat, and the only gaps are audio the pump handed to a socket that was being cut. */
function assertAudio(t: Test, rig: Rig, cuts: number): void {
  const pump = rig.asr.pump.stats();
  const at = rig.proxy.stats();
  const audit = auditCounterAudio(rig.proxy.audio());
  t.ok(at.audioBytes > 0, `${at.audioBytes} audio bytes reached the service`);
  t.equal(audit.backwards, 0, 'nothing repeated or out of order');
  t.equal(pump.droppedBytes, 0, 'the ring dropped nothing');
  t.ok(audit.gaps <= cuts, `${audit.gaps} gaps, at most one per cut (${cuts})`);
  t.equal(pump.sentBytes - at.audioBytes, audit.lostSamples * 2, 'every byte sent reached the service, or is a gap at a cut');
}

t.test('a socket cut 1.5 s after it opens: every drop reconnects at once as attempt 1; audio in order, frames keep coming', async (t) => {
  const rig = await startRig({ cutAfterMs: 1500 });
  t.teardown(() => rig.stop());
  await rig.proxy.until(
    () => {
      const s = rig.proxy.stats().sockets;
      return s.speechlab.cut >= 3 && s.vlm.cut >= 3 && s.speechlab.opened >= 4 && s.vlm.opened >= 4;
    },
    'three cuts of each socket and their reconnects',
    30_000,
  );
  t.equal(rig.asr.actor.getSnapshot().status, 'active', 'the ASR stream runs');
  t.equal(rig.vlm.actor.getSnapshot().status, 'active', 'the VLM stream runs');
  await audioAfterLastCut(rig);
  await settle(rig);
  const s = rig.proxy.stats();
  for (const kind of ['asr', 'vlm'] as const) {
    const states = rig.states(kind);
    t.notOk(
      states.some((e) => e.state === 'failed'),
      `${kind}: no failure`,
    );
    // Each connection lived 1.5 s, so each was healthy: replaced at once (a wait only if the client saw
    // it open less than minCycleMs, 1 s, before the cut), never a growing backoff.
    t.ok(
      states.every((e) => e.state !== 'backingOff' || (e.attempt === 1 && (e.delay_ms as number) <= 1000)),
      `${kind}: no backoff beyond the minimum cycle`,
    );
    const reconnects = states.filter((e) => e.state === 'connecting').slice(1);
    t.ok(reconnects.length >= 3, `${kind}: ${reconnects.length} reconnects`);
    t.ok(
      reconnects.every((e) => e.attempt === 1 && /socket closed \(1006/.test(String(e.reason))),
      `${kind}: each one attempt 1, with the reason`,
    );
    t.match(states.at(-1), { state: 'stopped' });
  }
  assertAudio(t, rig, s.sockets.speechlab.cut);
  t.ok(s.frames > 0 && s.frames <= rig.vlm.stats().sent, `${s.frames} frames reached the service of ${rig.vlm.stats().sent} sent`);
  t.match(rig.states('vlm').at(-1), { frames_sent: rig.vlm.stats().sent });
});

t.test('garbage frames and error events interleaved: the sessions stay, every one is reported, audio is byte-exact', async (t) => {
  const rig = await startRig({ garbageEveryMs: 100 });
  t.teardown(() => rig.stop());
  let vlmErrors = 0;
  let asrErrors = 0;
  await Promise.all([
    onEvent(rig.asr, 'asr.error', () => ++asrErrors === 5, 30_000),
    onEvent(rig.vlm, 'vlm.error', () => ++vlmErrors === 5, 30_000),
    rig.proxy.until(() => rig.proxy.stats().audioBytes >= 32_000 && rig.proxy.stats().frames >= 3, 'audio and frames flowing', 30_000),
  ]);
  await settle(rig);
  const s = rig.proxy.stats();
  t.equal(s.sockets.speechlab.opened, 1, 'one recognition socket: no reconnect');
  t.equal(s.sockets.vlm.opened, 1, 'one vision socket: no reconnect');
  t.ok(count(rig.asrEvents, 'asr.invalid') >= 2 && count(rig.asrEvents, 'asr.error') >= 2, 'ASR reports invalid frames and errors');
  t.ok(count(rig.vlmEvents, 'vlm.invalid') >= 2 && count(rig.vlmEvents, 'vlm.error') >= 2, 'VLM reports invalid frames and errors');
  t.match(
    rig.asrEvents.find((e) => e.type === 'asr.error'),
    { message: 'Recognition error: injected by the fault proxy' },
  );
  t.same(
    rig.states('asr').map((e) => e.state),
    ['connecting', 'streaming', 'stopped'],
  );
  t.same(
    rig.states('vlm').map((e) => e.state),
    ['connecting', 'streaming', 'stopped'],
  );
  assertAudio(t, rig, 0);
  t.equal(rig.asr.pump.stats().sentBytes, s.audioBytes, 'byte-exact');
  t.equal(s.frames, rig.vlm.stats().sent, 'every frame sent arrived');
});

t.test('periodic info "session restarted": reported, the socket kept, audio byte-exact', async (t) => {
  const rig = await startRig({ infoEveryMs: 200 });
  t.teardown(() => rig.stop());
  let infos = 0;
  await onEvent(rig.asr, 'asr.info', (e) => e.message === 'Recognition session restarted' && ++infos === 5, 30_000);
  await rig.proxy.until(() => rig.proxy.stats().frames >= 2, 'frames too');
  await settle(rig);
  const s = rig.proxy.stats();
  t.equal(infos, 5, 'every info reported');
  t.equal(s.sockets.speechlab.opened, 1);
  t.same(
    rig.states('asr').map((e) => e.state),
    ['connecting', 'streaming', 'stopped'],
  );
  assertAudio(t, rig, 0);
  t.equal(rig.asr.pump.stats().sentBytes, s.audioBytes, 'byte-exact');
  t.equal(s.frames, rig.vlm.stats().sent);
});

t.test('401 at connect, from the script or from the service: both streams stop with the reason after one attempt', async (t) => {
  const rig = await startRig({ rejectUpgrade: { status: 401, error: 'Invalid API key: key revoked' } });
  t.teardown(() => rig.stop());
  const [asr, vlm] = await Promise.all([onEvent(rig.asr, 'asr.failed'), onEvent(rig.vlm, 'vlm.failed')]);
  t.match(asr.reason, /Invalid API key: key revoked/);
  t.match(vlm.reason, /Invalid API key: key revoked/);
  t.same(
    rig.states('asr').map((e) => [e.state, e.reason]),
    [
      ['connecting', undefined],
      ['failed', asr.reason],
    ],
  );
  t.same(
    rig.states('vlm').map((e) => e.state),
    ['connecting', 'failed'],
  );
  const s = rig.proxy.stats();
  t.equal(s.refused, 2, 'one attempt each');
  t.equal(s.audioBytes, 0);
  t.equal(s.frames, 0);

  const wrong = await startRig({}, { apiKey: 'key_live_not-a-real-key-at-all' });
  t.teardown(() => wrong.stop());
  const real = await onEvent(wrong.asr, 'asr.failed');
  t.match(real.reason, /Invalid API key/, 'the service’s own 401 is relayed');
  t.notMatch(String(real.reason), /not-a-real-key/, 'the key is not repeated');
  t.equal(wrong.proxy.stats().serviceRefused >= 1, true);
});

t.test('1008 on the first message: the streams stop with the server’s reason; nothing reached the service', async (t) => {
  const rig = await startRig({ policyCloseOnFirstMessage: 'Insufficient CU balance' });
  t.teardown(() => rig.stop());
  const [asr, vlm] = await Promise.all([onEvent(rig.asr, 'asr.failed'), onEvent(rig.vlm, 'vlm.failed')]);
  t.match(asr.reason, /policy violation: Insufficient CU balance/);
  t.match(vlm.reason, /policy violation: Insufficient CU balance/);
  t.match(
    rig.asrEvents.find((e) => e.type === 'asr.error'),
    { message: 'Recognition error: Insufficient CU balance' },
  );
  t.same(
    rig.states('asr').map((e) => e.state),
    ['connecting', 'streaming', 'failed'],
  );
  t.same(
    rig.states('vlm').map((e) => e.state),
    ['connecting', 'streaming', 'failed'],
  );
  const s = rig.proxy.stats();
  t.equal(s.sockets.speechlab.opened, 1, 'no retry');
  t.equal(s.sockets.vlm.opened, 1, 'no retry');
  t.equal(s.audioBytes, 0);
  t.equal(s.frames, 0);
});

t.test('random cuts (seeded): the streams keep going, audio in order, gaps only at cuts', async (t) => {
  const rig = await startRig({ randomCut: { minMs: 300, maxMs: 1500 } });
  t.teardown(() => rig.stop());
  await rig.proxy.until(
    () => {
      const s = rig.proxy.stats().sockets;
      return s.speechlab.cut >= 4 && s.vlm.cut >= 4;
    },
    'four random cuts of each socket',
    60_000,
  );
  await audioAfterLastCut(rig);
  await settle(rig);
  for (const kind of ['asr', 'vlm'] as const)
    t.notOk(
      rig.states(kind).some((e) => e.state === 'failed'),
      `${kind} never failed`,
    );
  assertAudio(t, rig, rig.proxy.stats().sockets.speechlab.cut);
});

t.test(
  'chat through the proxy: 503 then 429 with Retry-After are retried as the server says, then the real model answers; SSE, slow answers and speech pass through',
  async (t) => {
    const svc = await startService({ port: 0, dbPath: ':memory:', logger: createLogger({ level: 'silent' }), jwtSecret: 'c'.repeat(32) });
    t.teardown(() => svc.close());
    const proxy = await startFaultProxy({
      target: svc.url,
      random: seededRandom(1),
      script: {
        chatFailures: [
          { status: 503, error: 'Failed to connect to provider_a server' },
          { status: 429, error: 'Too many requests', retryAfterS: 1 },
        ],
      },
    });
    t.teardown(() => proxy.close());
    const { apiKey } = svc.admin.createApiKey('robot');
    const retries: Array<{ attempt: number; delayMs: number }> = [];
    const cloud = createCloudClient({
      addresses: requireResolved({ base_url: proxy.url, ws_base_url: proxy.wsUrl, asr_ws_url: `${proxy.wsUrl}/asr`, vlm_ws_url: `${proxy.wsUrl}/vlm` }),
      apiKey,
      retry: {
        maxRetries: 3,
        baseDelayMs: 20,
        maxDelayMs: 100,
        maxRetryAfterMs: 5000,
        onRetry: (r) => void retries.push({ attempt: r.attempt, delayMs: r.delayMs }),
      },
    });
    const request = { model: 'gen-4o-mini', messages: [{ role: 'user' as const, content: 'hello robot' }] };
    const answer = await cloud.chat.create('provider_a', request);
    t.ok(answer.choices[0]?.message.content, 'the rule-based model answered');
    t.equal(retries.length, 2);
    t.ok(retries[0]!.delayMs <= 20, 'the 503 waits the backoff');
    t.equal(retries[1]!.delayMs, 1000, 'the 429 waits exactly its Retry-After');
    t.match(proxy.stats().http, { chat: 3, chatFailed: 2, statuses: { '200': 1 } });

    const streamed = await (await cloud.chat.stream('provider_a', request)).collect();
    t.ok(streamed.content.length > 0, 'SSE passes through');
    proxy.script({ chatDelayMs: 300 });
    t.ok((await cloud.chat.create('provider_a', request)).choices[0]?.message.content, 'a slow answer still arrives');
    const speech = await cloud.tts.speechlab({ input: 'hello' });
    t.ok(speech.audio.length > 1000, `${speech.audio.length} bytes of speech pass through`);
    t.equal(proxy.stats().http.tts, 1);
  },
);
