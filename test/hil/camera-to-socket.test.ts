// HIL: a video file made by ffmpeg, read by OpenCV, sampled to 10 fps, JPEG-encoded and sent to a WebSocket peer at that rate.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer, WebSocket } from 'ws';
import { mergeMap } from 'rxjs';
import { createCamera } from '../../devices/camera.js';
import { sampleFps } from '../../src/pipelines/frame-sampler.js';
import { encodeJpegLatest, toVlmMessage } from '../../src/pipelines/jpeg.js';
import { loadOpenCV } from '../../src/vision/opencv.js';

const dir = mkdtempSync(join(tmpdir(), 'hil-cam-'));
const video = join(dir, 'testsrc.avi');
execFileSync('ffmpeg', ['-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=640x480:rate=30', '-t', '4', '-c:v', 'mjpeg', '-q:v', '5', video]);

t.test('frames arrive at the socket at the target fps, as 640x480 JPEGs with capture times', async (t) => {
  const cv = await loadOpenCV();
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  const port = (server.address() as { port: number }).port;
  const got: Array<{ timestamp: number; frame: string }> = [];
  const want = 20;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out with ${got.length} frames`)), 20_000);
    server.on('connection', (ws) =>
      ws.on('message', (data) => {
        got.push(JSON.parse(data.toString()) as { timestamp: number; frame: string });
        if (got.length === want) {
          clearTimeout(timer);
          resolve();
        }
      }),
    );
  });
  const client = new WebSocket(`ws://127.0.0.1:${port}/`);
  await new Promise((r) => client.once('open', r));
  const stats = { processed: 0, dropped: 0 };
  const sub = createCamera({ binding: 'file', file: video })
    .frames()
    .pipe(
      sampleFps({ fps: 10, timeOf: (f) => f.capturedAt }),
      encodeJpegLatest(70, stats),
      mergeMap(async (f) => client.send(JSON.stringify(toVlmMessage(f)))),
    )
    .subscribe();
  try {
    await done;
  } finally {
    sub.unsubscribe();
    client.close();
    server.close();
  }
  const gaps = got
    .slice(1)
    .map((m, i) => (m.timestamp - got[i]!.timestamp) * 1000)
    .sort((a, b) => a - b);
  const median = gaps[Math.floor(gaps.length / 2)]!;
  t.ok(median > 80 && median < 120, `median gap between sent frames ${median.toFixed(1)} ms (10 fps is 100 ms)`);
  const mean = gaps.reduce((s, g) => s + g, 0) / gaps.length;
  t.ok(mean > 80 && mean < 140, `mean gap ${mean.toFixed(1)} ms`);
  const img = cv.imdecode(Buffer.from(got[0]!.frame, 'base64'));
  t.same([img.cols, img.rows], [640, 480], 'the peer decodes a 640x480 JPEG');
});
