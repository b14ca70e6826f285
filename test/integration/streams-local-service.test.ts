// Fault tests of the ASR and VLM stream actors against the real local service: restarts, silence closes, wrong and revoked keys, exhausted balance.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Subject } from 'rxjs';
import { startService, type RunningService, type ServiceOptions } from '../../src/service/index.js';
import { openSpeechlabAsr, openVision } from '../../src/cloud/sockets.js';
import { startAsrStream } from '../../actors/streams/asr-stream.js';
import { startVlmStream } from '../../actors/streams/vlm-stream.js';
import { linkFromAsrSession, linkFromVisionSession } from '../../src/cloud/link.js';
import { createCamera } from '../../devices/camera.js';
import { createLogger } from '../../src/log.js';
import { onEvent } from '../helpers/wait.js';

const logger = createLogger({ level: 'silent' });
const secret = 'y'.repeat(32);
const timing = { backoffInitialMs: 50, backoffMaxMs: 200, connectTimeoutMs: 3000, minCycleMs: 0, breakerThreshold: 100 };

const streaming = (e: Record<string, unknown>) => e.state === 'streaming';

/** A service on a fixed port and a database file, so it can be stopped and started again with the same keys. */
async function restartable(extra: ServiceOptions = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'streams-svc-'));
  const opts: ServiceOptions = { port: 0, dbPath: join(dir, 'cloud.db'), logger, jwtSecret: secret, ...extra };
  let svc: RunningService = await startService(opts);
  const port = svc.port;
  return {
    get svc() {
      return svc;
    },
    async restart() {
      await svc.close();
      svc = await startService({ ...opts, port });
    },
    close: () => svc.close(),
  };
}

t.test('ASR and VLM streams recover from a service restarted over and over', async (t) => {
  const s = await restartable();
  t.teardown(() => s.close());
  const { apiKey } = s.svc.admin.createApiKey('robot');
  const wsUrl = s.svc.wsUrl;
  const vlmWsUrl = s.svc.vlmWsUrl;
  const audio = new Subject<Buffer>();
  const asr = startAsrStream({
    rate: 16000,
    audio$: audio,
    timing,
    connect: async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: wsUrl, apiKey, rate: 16000, signal })),
  });
  t.teardown(() => asr.stop());
  const vlm = startVlmStream({
    frames$: createCamera({ binding: 'synthetic', width: 320, height: 240, fps: 10 }).frames(),
    fps: 5,
    timing,
    connect: async (signal) => linkFromVisionSession(await openVision({ vlmWsUrl, apiKey, signal })),
  });
  t.teardown(() => vlm.stop());
  await Promise.all([onEvent(asr, 'asr.state', streaming), onEvent(vlm, 'vlm.reply')]);
  for (let i = 0; i < 3; i++) {
    const asrBack = onEvent(asr, 'asr.connected');
    const vlmBack = onEvent(vlm, 'vlm.reply');
    const asrDown = onEvent(asr, 'asr.state', (e) => e.state === 'backingOff');
    await s.restart();
    await asrDown;
    audio.next(Buffer.alloc(3200)); // kept in the ring while the socket is down
    await asrBack;
    t.match(await vlmBack, { text: /I see no faces\./ }, `restart ${i + 1}: vision replies again`);
  }
  t.equal(asr.actor.getSnapshot().context.connections, 4, 'one ASR connection per service run');
  t.equal(asr.pump.stats().droppedBytes, 0);
  t.ok(vlm.stats().sent > 0);
});

t.test("the service's silence timeout (1000) reconnects at once and keeps the audio", async (t) => {
  const svc = await startService({ port: 0, dbPath: ':memory:', logger, jwtSecret: secret, limits: { asrSilenceMs: 300 } as never });
  t.teardown(() => svc.close());
  const { apiKey } = svc.admin.createApiKey('robot');
  const audio = new Subject<Buffer>();
  const asr = startAsrStream({
    rate: 16000,
    audio$: audio,
    timing,
    connect: async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: svc.wsUrl, apiKey, rate: 16000, signal })),
  });
  t.teardown(() => asr.stop());
  await onEvent(asr, 'asr.state', streaming);
  const states: string[] = [];
  asr.actor.on('asr.state', (e) => states.push(String((e as { state?: unknown }).state)));
  const closed = await onEvent(asr, 'asr.closed');
  t.match(closed, { code: 1000, benign: true });
  await onEvent(asr, 'asr.state', streaming);
  t.equal(asr.pump.stats().droppedBytes, 0);
  t.same(states, ['connecting', 'streaming'], 'no backoff for a silence close: reconnected at once');
});

t.test('a wrong key, then a key revoked while the robot runs: both stop with the reason, without retrying', async (t) => {
  const s = await restartable();
  t.teardown(() => s.close());
  const wsUrl = s.svc.wsUrl;
  const wrong = startAsrStream({
    rate: 16000,
    audio$: new Subject<Buffer>(),
    timing,
    connect: async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: wsUrl, apiKey: 'om1_live_not-a-key', rate: 16000, signal })),
  });
  t.teardown(() => wrong.stop());
  const failed = await onEvent(wrong, 'asr.failed');
  t.match(failed.reason, /API key/i);
  t.notMatch(String(failed.reason), /not-a-key/, 'the key is not repeated');

  const { apiKey } = s.svc.admin.createApiKey('robot');
  let attempts = 0;
  const asr = startAsrStream({
    rate: 16000,
    audio$: new Subject<Buffer>(),
    timing,
    connect: async (signal) => {
      attempts += 1;
      return linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: wsUrl, apiKey, rate: 16000, signal }));
    },
  });
  t.teardown(() => asr.stop());
  await onEvent(asr, 'asr.state', streaming);
  s.svc.admin.rotateApiKey('robot');
  const revoked = onEvent(asr, 'asr.failed');
  await s.restart();
  t.match((await revoked).reason, /API key/i);
  // The drop reconnects at once, so one attempt may meet the port closed while the service restarts.
  t.ok(attempts >= 2 && attempts <= 3, `reconnected after the restart (${attempts} attempts in all)`);
  t.equal(asr.actor.getSnapshot().status, 'done', 'stopped for good after the 401: nothing left to retry');
});

t.test('an exhausted balance stops the stream with the service text', async (t) => {
  const svc = await startService({ port: 0, dbPath: ':memory:', logger, jwtSecret: secret });
  t.teardown(() => svc.close());
  const { apiKey } = svc.admin.createApiKey('broke');
  svc.admin.setCredits('broke', { prepaid: 0, monthlyUnused: 0, monthlyTotal: 0 });
  const audio = new Subject<Buffer>();
  const asr = startAsrStream({
    rate: 16000,
    audio$: audio,
    timing,
    connect: async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: svc.wsUrl, apiKey, rate: 16000, signal })),
  });
  t.teardown(() => asr.stop());
  const failed = onEvent(asr, 'asr.failed');
  // The service may refuse at the upgrade or after the first audio; either way the stream must stop.
  const first = await Promise.race([failed.then(() => 'failed'), onEvent(asr, 'asr.state', streaming).then(() => 'streaming')]);
  if (first === 'streaming') audio.next(Buffer.alloc(3200));
  t.match((await failed).reason, /balance|credit|insufficient|402/i, `stopped (${first} first)`);
});
