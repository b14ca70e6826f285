// Proves the reconnect ring buffer is bounded, drops oldest audio with a count, and replays held audio in order on reopen.
import t from 'tap';
import { BehaviorSubject, Subject } from 'rxjs';
import { PcmRingBuffer, gateWithRing } from '../../src/pipelines/ring-buffer.js';
import { muteWhile } from '../../src/pipelines/mute.js';

const b = (...xs: number[]) => Buffer.from(xs);

t.test('holds up to its capacity, then drops oldest first and counts it', async (t) => {
  const ring = new PcmRingBuffer(6);
  ring.push(b(1, 2));
  ring.push(b(3, 4));
  ring.push(b(5, 6));
  t.same(ring.stats(), { bytes: 6, chunks: 3, droppedBytes: 0, droppedChunks: 0 });
  ring.push(b(7, 8, 9));
  t.same(ring.stats(), { bytes: 5, chunks: 2, droppedBytes: 4, droppedChunks: 2 });
  t.same(Buffer.concat(ring.drain()), b(5, 6, 7, 8, 9));
  t.equal(ring.stats().bytes, 0);
});

t.test('a chunk larger than the ring keeps only its newest bytes', async (t) => {
  const ring = new PcmRingBuffer(3);
  ring.push(b(1));
  ring.push(b(2, 3, 4, 5, 6));
  t.same(Buffer.concat(ring.drain()), b(4, 5, 6));
  t.same(ring.stats().droppedBytes, 3);
});

t.test('memory never exceeds the capacity whatever is pushed', async (t) => {
  const ring = new PcmRingBuffer(32000);
  for (let i = 0; i < 10000; i++) {
    ring.push(Buffer.alloc(1 + (i % 977)));
    if (ring.stats().bytes > 32000) t.fail('over capacity');
  }
  const s = ring.stats();
  t.ok(s.bytes <= 32000 && s.droppedBytes > 0);
});

t.test('gate: passes while open, buffers while closed, replays in order before new audio', async (t) => {
  const open$ = new BehaviorSubject(true);
  const src = new Subject<Buffer>();
  const ring = new PcmRingBuffer(100);
  const out: number[] = [];
  src.pipe(gateWithRing(open$, ring)).subscribe((c) => out.push(...c));
  src.next(b(1));
  open$.next(false);
  src.next(b(2));
  src.next(b(3));
  t.same(out, [1], 'nothing passes while closed');
  open$.next(true);
  src.next(b(4));
  t.same(out, [1, 2, 3, 4], 'no byte lost or reordered across the reconnect');
  t.equal(ring.stats().droppedBytes, 0);
});

t.test('gate is closed until the first open signal', async (t) => {
  const open$ = new Subject<boolean>();
  const src = new Subject<Buffer>();
  const ring = new PcmRingBuffer(2);
  const out: number[] = [];
  src.pipe(gateWithRing(open$, ring)).subscribe((c) => out.push(...c));
  src.next(b(1));
  src.next(b(2));
  src.next(b(3));
  open$.next(true);
  t.same(out, [2, 3], 'ring of 2 bytes kept the newest two');
  t.equal(ring.stats().droppedBytes, 1);
});

t.test('mute replaces audio with silence of the same length while speaking', async (t) => {
  const speaking$ = new BehaviorSubject(false);
  const src = new Subject<Buffer>();
  const stats = { mutedBytes: 0 };
  const out: number[][] = [];
  src.pipe(muteWhile(speaking$, stats)).subscribe((c) => out.push([...c]));
  src.next(b(1, 2));
  speaking$.next(true);
  src.next(b(3, 4, 5));
  speaking$.next(false);
  src.next(b(6));
  t.same(out, [[1, 2], [0, 0, 0], [6]]);
  t.equal(stats.mutedBytes, 3);
});
