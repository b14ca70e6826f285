// HIL: microphone replay of an espeak-ng recording -> ASR stream actor -> the local service's speechlab socket -> asr.final event.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startService } from '../../src/service/index.js';
import { openSpeechlabAsr } from '../../src/cloud/sockets.js';
import { createMicrophone } from '../../devices/microphone.js';
import { chunkPcm } from '../../src/pipelines/pcm-chunker.js';
import { startAsrStream } from '../../actors/streams/asr-stream.js';
import { linkFromAsrSession } from '../../src/cloud/link.js';
import { createLogger } from '../../src/log.js';

const dir = mkdtempSync(join(tmpdir(), 'hil-asr-'));
const wav = join(dir, 'say.wav');
const wav16 = join(dir, 'say16.wav');
execFileSync('espeak-ng', ['-s', '140', '-w', wav, 'turn left']);
execFileSync('sox', [wav, '-r', '16000', '-c', '1', '-b', '16', wav16, 'pad', '0.3', '1.5']);

t.test('speech from the microphone becomes an asr.final event', async (t) => {
  const service = await startService({ port: 0, dbPath: ':memory:', logger: createLogger({ level: 'silent' }), jwtSecret: 'x'.repeat(32) });
  t.teardown(() => service.close());
  const { apiKey } = service.admin.createApiKey('robot');
  const mic = createMicrophone({ binding: 'replay', file: wav16, loop: true, realtime: true });
  const stream = startAsrStream({
    rate: 16000,
    audio$: mic.pcm().pipe(chunkPcm({ rate: 16000 })),
    connect: async (signal) => linkFromAsrSession(await openSpeechlabAsr({ wsBaseUrl: service.wsUrl, apiKey, rate: 16000, languageCode: 'en', signal })),
  });
  t.teardown(() => stream.stop());
  const final = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no transcript within 30 s')), 30_000);
    stream.actor.on('asr.final', (e) => {
      clearTimeout(timer);
      resolve(String((e as { text?: unknown }).text));
    });
    stream.actor.on('asr.failed', (e) => reject(new Error(String((e as { reason?: unknown }).reason))));
  });
  t.ok(final.length > 0, `transcript: "${final}"`);
});
