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

/** A socket whose peer announced it takes an explicit end (the local service), or not (undefined: a hosted one). */
function endSink(takesEnd: boolean) {
  const log: string[] = [];
  return {
    log,
    sendAudio(pcm: Buffer) {
      log.push(pcm.every((x) => x === 0) ? `zeros:${pcm.length}` : `audio:${pcm[0]}`);
      return true;
    },
    endUtterance() {
      if (!takesEnd) return undefined;
      log.push('end');
      return true;
    },
  };
}

t.test('the end of an utterance: an explicit end to a peer that takes one, commit zeros to any other, in order behind the audio', async (t) => {
  const END = Buffer.alloc(0);
  for (const takesEnd of [true, false]) {
    const audio = new Subject<Buffer>();
    const pump = new AudioPump(audio, 100, Date.now, 8);
    pump.start();
    const s = endSink(takesEnd);
    pump.attach(s);
    audio.next(b(1));
    audio.next(END);
    audio.next(b(2));
    t.same(s.log, takesEnd ? ['audio:1', 'end', 'audio:2'] : ['audio:1', 'zeros:8', 'audio:2']);
    t.match(pump.stats(), takesEnd ? { endsSent: 1, commitBytes: 0, sentBytes: 4 } : { endsSent: 0, commitBytes: 8, sentBytes: 12 });
    pump.stop();
  }
});

t.test('an end heard while no socket is open waits in the ring behind its audio; an end with no audio held is dropped', async (t) => {
  const END = Buffer.alloc(0);
  const audio = new Subject<Buffer>();
  const pump = new AudioPump(audio, 100, Date.now, 8);
  pump.start();
  audio.next(END); // nothing held: nothing to end
  audio.next(b(1));
  audio.next(END);
  audio.next(END); // said once
  audio.next(b(2));
  const s = endSink(true);
  pump.attach(s);
  t.same(s.log, ['audio:1', 'end', 'audio:2'], 'the next socket hears the utterance, its end, then the next one');
  pump.stop();
});
