// HIL: the real recorder binding (a fake `arecord` first on PATH streaming an espeak-ng recording), opened by its session actor, arrives byte-exact at a WebSocket peer; a recorder that exits is reopened by that actor.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer, WebSocket } from 'ws';
import { createMicrophone } from '../../devices/microphone.js';
import { startDeviceSession } from '../../actors/streams/device-session.js';
import { chunkPcm, chunkBytes } from '../../src/pipelines/pcm-chunker.js';
import { frameAsr, encodeAsrMessage } from '../../src/pipelines/asr-framing.js';

const dir = mkdtempSync(join(tmpdir(), 'hil-mic-'));
const wav = join(dir, 'speech.wav');
const raw = join(dir, 'speech.raw');
execFileSync('espeak-ng', ['-w', wav, 'hello robot, please turn left and stop']);
execFileSync('sox', [wav, '-r', '16000', '-c', '1', '-b', '16', '-e', 'signed-integer', '-t', 'raw', raw]);
const pcm = readFileSync(raw);

// The fake recorder: prints the recording, then stays alive like a microphone that hears silence.
const bin = join(dir, 'bin');
mkdirSync(bin);
writeFileSync(join(bin, 'arecord'), `#!/bin/sh\necho "$@" > "${join(dir, 'args')}"\ncat "${raw}"\nexec sleep 3600\n`);
chmodSync(join(bin, 'arecord'), 0o755);
const pathWas = process.env.PATH;
process.env.PATH = `${bin}:${pathWas ?? ''}`;
// Put back when the file ends (its process may be a batch's, with other files after it).
t.teardown(() => void (process.env.PATH = pathWas));

t.test('recorded PCM reaches the socket byte-exact, framed as ASR messages', async (t) => {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as { port: number }).port;
  const size = chunkBytes({ rate: 16000 }, 100);
  const expected = Math.floor(pcm.length / size) * size;
  const received: Array<Record<string, unknown>> = [];
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out with ${received.length} messages`)), 20_000);
    server.on('connection', (ws) =>
      ws.on('message', (data) => {
        received.push(JSON.parse(data.toString()) as Record<string, unknown>);
        const bytes = received.reduce((s, m) => s + Buffer.from(String(m.audio), 'base64').length, 0);
        if (bytes >= expected) {
          clearTimeout(timer);
          resolve();
        }
      }),
    );
  });
  const client = new WebSocket(`ws://127.0.0.1:${port}/`);
  await new Promise((r) => client.once('open', r));
  const mic = createMicrophone({ binding: 'recorder', recorder: 'arecord', device: 'plughw:9,0', rate: 16000 });
  const sub = mic
    .pcm()
    .pipe(chunkPcm({ rate: 16000 }), frameAsr({ rate: 16000, languageCode: 'en' }))
    .subscribe((m) => client.send(encodeAsrMessage(m)));
  // The recorder runs while its session actor holds it open (the ASR input's child `device:microphone` in an agent).
  const session = startDeviceSession(mic.device!, 'mic');
  try {
    await done;
  } finally {
    session.stop();
    sub.unsubscribe();
    client.close();
    server.close();
  }
  const audio = Buffer.concat(received.map((m) => Buffer.from(String(m.audio), 'base64')));
  t.equal(audio.length, expected, 'every complete 100 ms chunk arrived');
  t.ok(audio.equals(pcm.subarray(0, expected)), 'byte-exact');
  t.match(received[0], { rate: 16000, language_code: 'en' });
  t.ok(
    received.slice(1).every((m) => Object.keys(m).join() === 'audio'),
    'later messages carry audio only',
  );
  t.match(readFileSync(join(dir, 'args'), 'utf8'), /-D plughw:9,0 .*-r 16000 -c 1 -t raw -f S16_LE/);
});

t.test('a recorder that exits is a typed failure and is reopened by its session actor', async (t) => {
  const failing = join(dir, 'bin2');
  mkdirSync(failing);
  const count = join(dir, 'count');
  writeFileSync(join(failing, 'arecord'), `#!/bin/sh\necho x >> "${count}"\nprintf 'ab'\nexit 3\n`);
  chmodSync(join(failing, 'arecord'), 0o755);
  const saved = process.env.PATH;
  process.env.PATH = `${failing}:${saved ?? ''}`;
  const mic = createMicrophone({ binding: 'recorder', restart_initial_ms: 10, restart_max_ms: 20 });
  const failures: string[] = [];
  const audio = mic.pcm().subscribe();
  let session: ReturnType<typeof startDeviceSession> | undefined;
  await new Promise<void>((resolve) => {
    // Each failure is a `backingOff` state event of the session (the bus's "reopened in N ms" error in an agent).
    session = startDeviceSession(mic.device!, 'mic', {
      onEvent: (e) => {
        if (e.type !== 'mic.state' || e.state !== 'backingOff') return;
        failures.push(String(e.reason));
        if (failures.length === 3) resolve();
      },
    });
  });
  session?.stop();
  audio.unsubscribe();
  process.env.PATH = saved;
  t.match(failures[0], /microphone: .*arecord exited with code 3/);
  t.ok(readFileSync(count, 'utf8').split('\n').filter(Boolean).length >= 3, 'the recorder ran again after each failure');
});
