// HIL: the RTSP microphone (OM1's GoogleASRRTSPInput) hears a tone that a second ffmpeg publishes to it over RTSP on loopback; a dead stream ends its link with a reason.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { firstValueFrom, filter, scan } from 'rxjs';
import { createMicrophone } from '../../devices/microphone.js';
import type { LinkEvent } from '../../src/cloud/link.js';

// A hang guard on a loaded 2-core machine, not a timing assertion.
t.setTimeout(120_000);

/** A free TCP port on loopback (the listener is closed before ffmpeg binds it). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const stop = (p: ChildProcess) => new Promise<void>((r) => (p.exitCode !== null || p.signalCode !== null ? r() : (p.once('exit', () => r()), p.kill())));

/**
 * Publishes a 440 Hz tone to `url` over RTSP (TCP), started again each time it exits early (the
 * listening side may not accept yet) until `stopped`: the wait is for the connection, not a sleep.
 */
function publishTone(url: string): { stop: () => Promise<void> } {
  let proc: ChildProcess | undefined;
  let stopped = false;
  const start = () => {
    if (stopped) return;
    proc = spawn(
      'ffmpeg',
      [
        '-hide_banner',
        '-loglevel',
        'error',
        '-re',
        '-f',
        'lavfi',
        '-i',
        'sine=frequency=440:sample_rate=16000',
        '-t',
        '60',
        '-c:a',
        'aac',
        '-f',
        'rtsp',
        '-rtsp_transport',
        'tcp',
        url,
      ],
      { stdio: 'ignore' },
    );
    proc.once('exit', () => setImmediate(start));
  };
  start();
  return {
    stop: async () => {
      stopped = true;
      if (proc) await stop(proc);
    },
  };
}

/** Root mean square of s16le samples. */
function rms(pcm: Buffer): number {
  let sum = 0;
  const n = Math.floor(pcm.length / 2);
  for (let i = 0; i < n; i++) sum += pcm.readInt16LE(i * 2) ** 2;
  return Math.sqrt(sum / Math.max(1, n));
}

t.test('the stream a source publishes is heard as mono 16 kHz PCM', async (t) => {
  const port = await freePort();
  const url = `rtsp://127.0.0.1:${port}/audio`;
  const mic = createMicrophone({ binding: 'rtsp', url, listen: true });
  t.equal(mic.binding, 'rtsp');
  t.equal(mic.rate, 16000);
  const heard = firstValueFrom(
    mic.pcm().pipe(
      scan((all, b: Buffer) => Buffer.concat([all, b]), Buffer.alloc(0)),
      filter((all) => all.length >= 32000),
    ),
  );
  const controller = new AbortController();
  const link = await mic.device!.connect(controller.signal);
  const detach = mic.device!.attach(link);
  const publisher = publishTone(url);
  const second = await heard;
  t.ok(second.length >= 32000, 'a second of audio arrived');
  // The tone is there (a silent or garbled stream would be near 0); the sine at full scale is ~0.7 of 32767.
  t.ok(rms(second.subarray(8000)) > 1000, `the tone is heard (rms ${Math.round(rms(second.subarray(8000)))})`);
  detach();
  link.close();
  await publisher.stop();
});

t.test('a stream that cannot be read ends the link with a reason, the password hidden', async (t) => {
  const port = await freePort();
  const mic = createMicrophone({ binding: 'rtsp', url: `rtsp://robot:s3cret@127.0.0.1:${port}/audio` });
  const link = await mic.device!.connect(new AbortController().signal);
  const end = await new Promise<LinkEvent>((resolve) => link.subscribe(resolve));
  t.equal(end.type, 'close');
  const reason = (end as { reason?: string }).reason ?? '';
  t.match(reason, /^ffmpeg reading rtsp:\/\/robot:\*\*\*@127\.0\.0\.1:\d+\/audio exited with code/);
  t.notMatch(reason, /s3cret/);
});

t.test('a missing decoder is a fatal error that says so', async (t) => {
  const mic = createMicrophone({ binding: 'rtsp', url: 'rtsp://127.0.0.1:1/audio', ffmpeg: 'ffmpeg-not-installed-here' });
  await t.rejects(mic.device!.connect(new AbortController().signal), { fatal: true, message: /ffmpeg-not-installed-here is not installed/ });
});
