// Proves the audio pump's promise across reconnects: held audio goes first and in order, a socket refusing mid-flush loses nothing, overflow is counted, silence is counted apart.
import t from 'tap';
import { Subject } from 'rxjs';
import { AudioPump } from '../../actors/streams/audio-pump.js';

const b = (n: number) => Buffer.from([n, n]);
const seq = (chunks: Buffer[]) => chunks.map((c) => c[0]);

/** A socket that takes `accept` chunks, then refuses everything (it is closing under us). */
function sink(accept = Infinity) {
  const got: Buffer[] = [];
  return {
    got,
    sendAudio(pcm: Buffer) {
      if (got.length >= accept) return false;
      got.push(pcm);
      return true;
    },
  };
}

t.test('audio heard while no socket is open is sent first on the next one, oldest first, then live audio', async (t) => {
  const audio = new Subject<Buffer>();
  const pump = new AudioPump(audio, 100);
  pump.start();
  audio.next(b(1));
  audio.next(b(2));
  const s = sink();
  pump.attach(s);
  audio.next(b(3));
  t.same(seq(s.got), [1, 2, 3]);
  t.match(pump.stats(), { sentBytes: 6, droppedBytes: 0, bytes: 0 });
  pump.stop();
});

t.test('a socket that refuses in the middle of the flush: the rest waits, in order, for the next socket', async (t) => {
  const audio = new Subject<Buffer>();
  const pump = new AudioPump(audio, 100);
  pump.start();
  for (let i = 1; i <= 5; i++) audio.next(b(i));
  const closing = sink(2);
  pump.attach(closing);
  t.same(seq(closing.got), [1, 2], 'two chunks went out before the socket refused');
  audio.next(b(6)); // live audio while the refusing socket is still attached
  pump.detach();
  audio.next(b(7));
  const next = sink();
  pump.attach(next);
  audio.next(b(8));
  t.same(seq(next.got), [3, 4, 5, 6, 7, 8], 'nothing lost, nothing repeated, nothing reordered');
  t.match(pump.stats(), { sentBytes: 16, droppedBytes: 0, requeuedBytes: 2 });
  pump.stop();
});

t.test('an outage longer than the ring keeps the newest audio and counts exactly what it dropped', async (t) => {
  const audio = new Subject<Buffer>();
  const pump = new AudioPump(audio, 6);
  pump.start();
  for (let i = 1; i <= 5; i++) audio.next(b(i));
  t.match(pump.stats(), { bytes: 6, droppedBytes: 4, droppedChunks: 2 });
  const s = sink();
  pump.attach(s);
  t.same(seq(s.got), [3, 4, 5]);
  pump.stop();
});

t.test('keepalive silence is sent only when idle and counted apart from audio', async (t) => {
  let now = 0;
  const audio = new Subject<Buffer>();
  const pump = new AudioPump(audio, 100, () => now);
  pump.start();
  const s = sink();
  pump.attach(s);
  audio.next(b(1));
  now = 4000;
  t.notOk(pump.sendSilence(10, 5000), 'not idle long enough');
  now = 5000;
  t.ok(pump.sendSilence(10, 5000));
  t.match(pump.stats(), { sentBytes: 2, silenceBytes: 10 });
  pump.detach();
  t.notOk(pump.sendSilence(10, 0), 'no socket, no silence');
  pump.stop();
});
