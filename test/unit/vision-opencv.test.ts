// Proves the OpenCV loader: it loads the system build quietly, encodes JPEG, and turns thrown strings into typed errors.
import t from 'tap';
import { loadOpenCV, cvCall, cvCallAsync, OpenCvError, openCvIfLoaded, releaseMat, systemOpenCvLibDir } from '../../src/vision/opencv.js';
import { VisionAnalyser } from '../../src/vision/analyse.js';

t.test('loads once, without Info lines on stdout, and encodes a JPEG', async (t) => {
  const written: string[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    written.push(String(chunk));
    return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  let cv: Awaited<ReturnType<typeof loadOpenCV>>;
  try {
    cv = await loadOpenCV();
  } finally {
    process.stdout.write = original;
  }
  t.notOk(
    written.some((line) => line.includes('Info:')),
    'no Info: lines printed',
  );
  t.equal(await loadOpenCV(), cv, 'the same namespace on every call');
  t.equal(openCvIfLoaded(), cv);
  const mat = new cv.Mat(48, 64, cv.CV_8UC3, [10, 200, 30]);
  const jpeg = await cvCallAsync('imencode', () => cv.imencodeAsync('.jpg', mat, [cv.IMWRITE_JPEG_QUALITY, 70]));
  t.same([...jpeg.subarray(0, 2)], [0xff, 0xd8], 'JPEG start-of-image marker');
});

t.test("the binding's external memory tracker is off: it aborts V8 when a GC frees a Mat", async (t) => {
  const cv = await loadOpenCV();
  const binding = cv as unknown as { isCustomMatAllocatorEnabled(): boolean };
  t.equal(binding.isCustomMatAllocatorEnabled(), false, "Mats use OpenCV's own allocator");
});

t.test('releaseMat frees the pixels at once, even while an async call reads them, and twice is harmless', async (t) => {
  const cv = await loadOpenCV();
  const mat = new cv.Mat(480, 640, cv.CV_8UC3, [10, 200, 30]);
  const encoding = cv.imencodeAsync('.jpg', mat, [cv.IMWRITE_JPEG_QUALITY, 70]);
  releaseMat(mat);
  t.ok(mat.empty, 'the JS Mat is empty after release');
  const jpeg = await encoding;
  t.same([...jpeg.subarray(0, 2)], [0xff, 0xd8], 'the worker still encoded the pixels it had');
  releaseMat(mat);
  releaseMat(undefined);
});

t.test("the analyser leaves the caller's frame alone and keeps one small frame for motion", async (t) => {
  const cv = await loadOpenCV();
  const analyser = await VisionAnalyser.create();
  const a = new cv.Mat(240, 320, cv.CV_8UC3, [20, 20, 20]);
  const b = new cv.Mat(240, 320, cv.CV_8UC3, [240, 240, 240]);
  const first = await analyser.analyseMat(a);
  const second = await analyser.analyseMat(b);
  t.equal(first.motion, undefined, 'no motion for the first frame');
  t.ok((second.motion ?? 0) > 0.9, 'a frame that changed everywhere is strong motion');
  t.notOk(a.empty, 'the caller still owns its frame');
  t.same([second.width, second.height], [320, 240]);
  analyser.dispose();
  const third = await analyser.analyseMat(b);
  t.equal(third.motion, undefined, 'after dispose motion starts over');
});

t.test('a string thrown by OpenCV becomes an OpenCvError naming the operation', async (t) => {
  const cv = await loadOpenCV();
  const mat = new cv.Mat(8, 8, cv.CV_8UC3, [0, 0, 0]);
  const err = t.throws(() => cvCall('encode frame', () => cv.imencode('.nope', mat))) as unknown;
  t.ok(err instanceof OpenCvError);
  t.equal((err as OpenCvError).code, 'opencv_failed');
  t.match((err as OpenCvError).message, /^encode frame: .*could not find encoder/);
  await t.rejects(
    cvCallAsync('open capture', async () => new cv.VideoCapture('/definitely/not/here.mp4')),
    { name: 'OpenCvError', message: /^open capture: .*failed to open capture/ },
  );
});

t.test('library directory follows the architecture', async (t) => {
  t.equal(systemOpenCvLibDir('x64'), '/usr/lib/x86_64-linux-gnu');
  t.equal(systemOpenCvLibDir('arm64'), '/usr/lib/aarch64-linux-gnu');
});
