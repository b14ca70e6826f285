// Proves frame sampling holds the target fps, latest-frame-wins never queues behind a slow consumer, and JPEG encoding works.
import t from 'tap';
import { TestScheduler } from 'rxjs/testing';
import { timer, map, take, from, lastValueFrom, toArray, Subject } from 'rxjs';
import { sampleFps } from '../../src/pipelines/frame-sampler.js';
import { latestWins } from '../../src/pipelines/latest-wins.js';
import { encodeJpeg, encodeJpegSync, toVlmMessage, encodeJpegLatest } from '../../src/pipelines/jpeg.js';
import { consumeFrame, passFramesWhile, releaseFrame, type Frame } from '../../src/pipelines/frame.js';
import { syntheticFrames } from '../../devices/camera-sim.js';
import { loadOpenCV } from '../../src/vision/opencv.js';

const scheduler = (t: { same: (a: unknown, b: unknown) => void }) => new TestScheduler((actual, expected) => t.same(actual, expected));

t.test('sampleFps takes one item per period on a steady schedule', async (t) => {
  scheduler(t).run(({ cold, expectObservable }) => {
    // A source every 10 ms sampled at 25 fps (40 ms) with no early tolerance: items at 0, 40, 80.
    const src = cold('a 9ms b 9ms c 9ms d 9ms e 9ms f 9ms g 9ms h 9ms i|');
    expectObservable(src.pipe(sampleFps({ fps: 25, tolerance: 0 }))).toBe('a 39ms e 39ms i|');
  });
});

t.test('sampleFps at the source rate keeps every frame despite jitter', async (t) => {
  const times = [0, 31, 68, 99, 135, 166, 198, 234];
  const out = await lastValueFrom(from(times).pipe(sampleFps({ fps: 30, timeOf: (x) => x }), toArray()));
  t.same(out, times);
});

t.test('sampleFps skips missed slots instead of bursting after a stall', async (t) => {
  const times = [0, 100, 1000, 1010, 1020, 1100];
  const out = await lastValueFrom(from(times).pipe(sampleFps({ fps: 10, timeOf: (x) => x }), toArray()));
  t.same(out, [0, 100, 1000, 1100]);
});

t.test('latestWins: a slow consumer processes the newest item, never a queue', async (t) => {
  scheduler(t).run(({ cold, expectObservable }) => {
    const stats = { processed: 0, dropped: 0 };
    // Work takes 5 ms; items arrive every 1 ms: a, then the newest waiting at each finish.
    const src = cold('abcdefghij|');
    const out = src.pipe(latestWins((x: string) => timer(5).pipe(map(() => x.toUpperCase())), stats));
    expectObservable(out).toBe('-----A----F----(J|)');
  });
});

t.test('latestWins counts drops and releases replaced items', async (t) => {
  const src = new Subject<number>();
  const gate = new Subject<void>();
  const stats = { processed: 0, dropped: 0 };
  const released: number[] = [];
  const out: number[] = [];
  src
    .pipe(
      latestWins(
        (x: number) =>
          gate.pipe(
            take(1),
            map(() => x),
          ),
        stats,
        (x) => released.push(x),
      ),
    )
    .subscribe((x) => out.push(x));
  for (let i = 0; i < 100; i++) src.next(i);
  t.same(stats, { processed: 1, dropped: 98 }, 'one running, one waiting, the rest replaced');
  t.equal(released.length, 98);
  gate.next();
  gate.next();
  t.same(out, [0, 99], 'the running item finished first, then the newest');
});

t.test('JPEG: quality changes the size, async equals sync, the vision message is base64 with seconds', async (t) => {
  const cv = await loadOpenCV();
  const mat = new cv.Mat(480, 640, cv.CV_8UC3, [0, 0, 0]);
  mat.drawCircle(new cv.Point2(320, 240), 100, new cv.Vec3(20, 200, 250), -1);
  mat.putText('cortexd', new cv.Point2(50, 80), cv.FONT_HERSHEY_SIMPLEX, 2, new cv.Vec3(255, 255, 255), 3);
  const frame = { mat, capturedAt: 1_700_000_000_123, seq: 7 };
  const q70 = await encodeJpeg(frame);
  const q20 = await encodeJpeg(frame, 20);
  t.ok(q20.jpeg.length < q70.jpeg.length, 'lower quality, smaller file');
  t.same(q70.jpeg, (await encodeJpegSync(frame, 70)).jpeg);
  t.same([q70.width, q70.height, q70.seq], [640, 480, 7]);
  const decoded = cv.imdecode(q70.jpeg);
  t.same([decoded.cols, decoded.rows], [640, 480]);
  const msg = toVlmMessage(q70);
  t.equal(msg.timestamp, 1_700_000_000.123);
  t.same(Buffer.from(msg.frame, 'base64'), q70.jpeg);
  await t.rejects(encodeJpeg(frame, 101), RangeError);
  // The latest-wins encoder owns what it is given: three frames in, each released once done or replaced.
  const three = [0, 1, 2].map((seq) => ({ mat: mat.copy(), capturedAt: frame.capturedAt, seq }));
  const out = await lastValueFrom(from(three).pipe(encodeJpegLatest(70), toArray()));
  t.ok(out.length >= 1 && out.length <= 3);
  t.ok(
    three.every((f) => f.mat.empty),
    'every frame given to the encoder is released',
  );
});

t.test('every frame a camera emits is released by the pipeline: sampled out, held back, replaced or encoded', async (t) => {
  const seen: Frame[] = [];
  let open = false;
  const frames = syntheticFrames({ binding: 'synthetic', width: 320, height: 240, fps: 200, frames: 60 });
  const stats = { processed: 0, dropped: 0 };
  const encoded = await lastValueFrom(
    frames.pipe(
      map((f) => (seen.push(f), f)),
      sampleFps({ fps: 100, timeOf: (f: Frame) => f.capturedAt, onDrop: releaseFrame }),
      // Alternately open and closed, as a socket that drops and reconnects.
      passFramesWhile(() => (open = !open)),
      encodeJpegLatest(70, stats),
      toArray(),
    ),
  );
  t.equal(seen.length, 60, 'the camera produced every frame');
  t.ok(encoded.length > 0, 'some frames were encoded');
  t.same(
    seen.filter((f) => !f.mat.empty).map((f) => f.seq),
    [],
    'no frame still holds its pixels',
  );
});

t.test('consumeFrame releases the frame when its work is cancelled', async (t) => {
  const cv = await loadOpenCV();
  const frame: Frame = { mat: new cv.Mat(48, 64, cv.CV_8UC3, [1, 2, 3]), capturedAt: 0, seq: 0 };
  const never = new Subject<number>();
  const sub = consumeFrame(() => never)(frame).subscribe();
  t.notOk(frame.mat.empty, 'held while the work runs');
  sub.unsubscribe();
  t.ok(frame.mat.empty, 'released once the work is cancelled');
});
