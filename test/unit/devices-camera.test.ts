// Proves the simulated cameras: generated frames at the configured size and count, and a video file read back by OpenCV, looped or once.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lastValueFrom, toArray, take } from 'rxjs';
import { createCamera } from '../../devices/camera.js';
import { drawSyntheticFrame } from '../../devices/camera-sim.js';
import { loadOpenCV } from '../../src/vision/opencv.js';

t.test('synthetic camera: size, count, increasing sequence and capture times', async (t) => {
  const cam = createCamera({ binding: 'synthetic', width: 160, height: 120, fps: 200, frames: 5 });
  const frames = await lastValueFrom(cam.frames().pipe(toArray()));
  t.equal(frames.length, 5);
  t.same(
    frames.map((f) => [f.mat.cols, f.mat.rows]),
    Array(5).fill([160, 120]),
  );
  t.ok(frames.every((f, i) => i === 0 || (f.seq > frames[i - 1]!.seq && f.capturedAt >= frames[i - 1]!.capturedAt)));
});

t.test('file camera: reads a video written by OpenCV, once and looped', async (t) => {
  const cv = await loadOpenCV();
  const file = join(mkdtempSync(join(tmpdir(), 'cam-')), 'clip.avi');
  const writer = new cv.VideoWriter(file, cv.VideoWriter.fourcc('MJPG'), 25, new cv.Size(160, 120), true);
  for (let i = 0; i < 6; i++) writer.write(drawSyntheticFrame(cv, 160, 120, i * 10));
  writer.release();
  const once = await lastValueFrom(createCamera({ binding: 'file', file, fps: 500, loop: false }).frames().pipe(toArray()));
  t.equal(once.length, 6, 'every frame of the file, then complete');
  t.same([once[0]!.mat.cols, once[0]!.mat.rows], [160, 120]);
  const looped = await lastValueFrom(createCamera({ binding: 'file', file, fps: 500 }).frames().pipe(take(14), toArray()));
  t.equal(looped.length, 14, 'looping goes past the end');
  t.same(
    looped.map((f) => f.seq),
    [...Array(14).keys()],
  );
});

t.test('a missing video file or camera is a typed DeviceError', async (t) => {
  await t.rejects(lastValueFrom(createCamera({ binding: 'file', file: '/nope/missing.mp4' }).frames()), { name: 'DeviceError', code: 'camera_failed' });
  t.throws(() => createCamera({ binding: 'opencv', fourcc: 'TOOLONG' }));
});
