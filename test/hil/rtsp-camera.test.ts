// HIL: OM1's RTSP vision inputs (VLMVilaRTSP) on VLMInput's OpenCV camera: frames of a video that ffmpeg publishes over RTSP on loopback reach the vision socket.
import t from 'tap';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { hostInput } from '../helpers/input-host.js';
import { VLMInputSchema, VlmInput } from '../../actors/inputs/vlm-input.js';
import { createCamera } from '../../devices/camera.js';
import { convertOm1 } from '../../src/compat/om1/convert.js';
import { FakeLink } from '../support/fake-link.js';
import { until } from '../helpers/wait.js';

// A hang guard on a loaded 2-core machine, not a timing assertion.
t.setTimeout(180_000);

// OpenCV's FFmpeg backend reads its options from this variable when it opens a stream: here it is the RTSP
// server the publisher pushes to (ffmpeg has no RTSP server to pull from; a robot's is mediamtx or the like).
process.env.OPENCV_FFMPEG_CAPTURE_OPTIONS = 'rtsp_flags;listen';

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

t.test("an RTSP camera's frames reach the vision socket", async (t) => {
  const url = `rtsp://127.0.0.1:${await freePort()}/top_camera`;
  // The input as --om1 translates OM1's VLMVilaRTSP with this rtsp_url.
  const om1 = convertOm1({ version: 'v1.1.0', name: 'x', agent_inputs: [{ type: 'VLMVilaRTSP', config: { rtsp_url: url } }], agent_actions: [] });
  const entry = (om1.config.agent_inputs as Array<{ type: string; config: Record<string, unknown> }>)[0]!;
  t.same(entry.config.camera, { binding: 'opencv', device: url });
  // The publisher retries in its own shell until this side listens: OpenCV's open blocks this thread until then.
  const publisher = spawn(
    'sh',
    [
      '-c',
      `i=0; while [ $i -lt 300 ]; do ffmpeg -hide_banner -loglevel error -re -f lavfi -i testsrc=size=320x240:rate=10 -t 60 -c:v libx264 -pix_fmt yuv420p -f rtsp -rtsp_transport tcp '${url}' && exit 0; i=$((i+1)); sleep 0.2; done`,
    ],
    { stdio: 'ignore', detached: true },
  );
  t.teardown(() => {
    try {
      process.kill(-publisher.pid!, 'SIGTERM');
    } catch {
      // ended already
    }
  });
  const config = VLMInputSchema.parse({ ...entry.config, camera: { ...(entry.config.camera as object), width: 320, height: 240 }, fps: 5 });
  const link = new FakeLink();
  const host = hostInput('VLMInput', (callbacks) => new VlmInput(config, { connect: async () => link, camera: createCamera(config.camera), ctx: callbacks }));
  t.teardown(() => host.stop());
  await until('frames at the vision socket', () => link.frames.length >= 3, 120_000);
  t.ok(link.frames.length >= 3, `${link.frames.length} frames sent`);
});
