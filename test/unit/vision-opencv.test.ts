// Proves the OpenCV loader: it loads the system build quietly, encodes JPEG, and turns thrown strings into typed errors.
import t from 'tap';
import { loadOpenCV, cvCall, cvCallAsync, OpenCvError, openCvIfLoaded, systemOpenCvLibDir } from '../../src/vision/opencv.js';

t.test('loads once, without Info lines on stdout, and encodes a JPEG', async (t) => {
  const written: string[] = [];
  const original = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    written.push(String(chunk));
    return (original as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  let cv;
  try {
    cv = await loadOpenCV();
  } finally {
    process.stdout.write = original;
  }
  t.notOk(written.some((line) => line.includes('Info:')), 'no Info: lines printed');
  t.equal(await loadOpenCV(), cv, 'the same namespace on every call');
  t.equal(openCvIfLoaded(), cv);
  const mat = new cv.Mat(48, 64, cv.CV_8UC3, [10, 200, 30]);
  const jpeg = await cvCallAsync('imencode', () => cv.imencodeAsync('.jpg', mat, [cv.IMWRITE_JPEG_QUALITY, 70]));
  t.same([...jpeg.subarray(0, 2)], [0xff, 0xd8], 'JPEG start-of-image marker');
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
