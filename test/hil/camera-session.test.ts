// HIL: VLMInput's OpenCV camera runs under its session actor `device:camera`: a capture that ends (a video file read through the opencv binding, as a camera unplugged) is reopened and frames reach the socket again; a device that is not there is retried with the bus saying when; LocalVLMInput's worker session says its states on the bus too; a frame has one reader.
import t from 'tap';
import { pino } from 'pino';
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { firstValueFrom, take, toArray } from 'rxjs';
import { hostInput } from '../helpers/input-host.js';
import { VLMInputSchema, VlmInput } from '../../actors/inputs/vlm-input.js';
import { LocalVLMInputSchema, LocalVlmInput } from '../../actors/inputs/local-vlm-input.js';
import { createCamera } from '../../devices/camera.js';
import { FakeLink } from '../support/fake-link.js';
import { until } from '../helpers/wait.js';
import { streams } from '../helpers/bus-events.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const dir = mkdtempSync(join(tmpdir(), 'hil-cam-session-'));
const video = join(dir, 'testsrc.avi');
execFileSync('ffmpeg', ['-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=30', '-t', '3', '-c:v', 'mjpeg', '-q:v', '5', video]);
// Two frames: one run of the capture can give at most two analyses.
const short = join(dir, 'short.avi');
execFileSync('ffmpeg', ['-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=30', '-frames:v', '2', '-c:v', 'mjpeg', '-q:v', '5', short]);

function cameraInput(device: string, link: FakeLink) {
  const config = VLMInputSchema.parse({ camera: { binding: 'opencv', device, width: 320, height: 240, restart_initial_ms: 50, restart_max_ms: 100 }, fps: 10 });
  return hostInput('VLMInput', (callbacks) => new VlmInput(config, { connect: async () => link, camera: createCamera(config.camera), ctx: callbacks }));
}

t.test('a capture that ends is reopened by its session actor; frames reach the same socket again', async (t) => {
  const link = new FakeLink();
  const host = cameraInput(video, link);
  t.teardown(() => host.stop());
  await until('frames at the socket', () => link.frames.length > 0);
  t.ok(host.ref().getSnapshot().children['device:camera'], "the camera's session is the input actor's child device:camera");
  // OpenCV reads a file as fast as it decodes it: its end comes soon, as an unplugged camera's would.
  await until('the capture reopened', () => streams(host.events, 'cam').filter((e) => e.state === 'streaming').length >= 2);
  const outage = streams(host.events, 'cam').find((e) => (e.state === 'connecting' || e.state === 'backingOff') && e.reason);
  t.match(outage, { reason: /camera .*returned no frame/ }, 'the end is a state event with its reason');
  const before = link.frames.length;
  await until('frames after the reopen', () => link.frames.length > before);
  t.pass('frames flow again');
  t.equal(streams(host.events, 'vlm').filter((e) => e.state === 'streaming').length, 1, 'the vision socket was not touched');
  t.ok(host.ref().getSnapshot().hasTag('listening'), 'the input listens on: nothing restarted it');
});

t.test('a camera that is not there: each reopen is planned by its session and said on the bus; the input goes on', async (t) => {
  const host = cameraInput('/dev/video-none', new FakeLink());
  t.teardown(() => host.stop());
  const errors = () => host.events.flatMap((e) => (e.type === 'error' ? [e.message] : []));
  await until('two reopens', () => errors().length >= 2);
  t.match(errors()[0], /^camera: open camera \/dev\/video-none: .*; the device is reopened in \d+ ms$/);
  t.ok(
    streams(host.events, 'cam').every((e) => e.state !== 'streaming' && e.breaker !== true),
    'never open; refused opens back off and do not trip the breaker',
  );
  t.ok(host.ref().getSnapshot().hasTag('listening'), 'the input listens on');
});

t.test("LocalVLMInput: the worker's camera session reopens a capture that ended; its reopens reach the input", async (t) => {
  const config = LocalVLMInputSchema.parse({
    camera: { binding: 'opencv', device: short, width: 320, height: 240, restart_initial_ms: 250, restart_max_ms: 250 },
    fps: 10,
  });
  // Reopens 125-250 ms apart (equal jitter): more than the 100 ms the sampling at 10 fps keeps between analysed frames.
  const input = new LocalVlmInput(config);
  t.teardown(() => input.stop());
  const failures: string[] = [];
  const failuresSub = input.deviceFailures$.subscribe((f) => failures.push(`${f.message} (${f.retryInMs} ms)`));
  t.teardown(() => failuresSub.unsubscribe());
  const raws = await firstValueFrom(input.listen().pipe(take(3), toArray()));
  t.equal(raws.length, 3, 'three analyses of a two-frame capture: it was opened again');
  t.match(
    failures[0],
    /^camera: camera .*short\.avi returned no frame \(unplugged\?\) \(\d+ ms\)$/,
    'the end, and the wait the session planned, reached the input',
  );
});

t.test("LocalVLMInput in the input actor: the worker's camera session says its states on the bus as `cam` stream events, as VLMInput's does", async (t) => {
  const config = LocalVLMInputSchema.parse({
    camera: { binding: 'opencv', device: short, width: 320, height: 240, restart_initial_ms: 250, restart_max_ms: 250 },
    fps: 10,
  });
  const host = hostInput(
    'LocalVLMInput',
    (callbacks) => new LocalVlmInput(config, { ...callbacks, logger: pino({ level: 'silent' }), signal: new AbortController().signal }),
  );
  t.teardown(() => host.stop());
  const states = () => streams(host.events, 'cam').filter((e) => e.input === 'LocalVLMInput');
  // The two-frame capture ends: its session plans a reopen (a `backingOff`, or a `connecting` with the reason) and opens it again.
  await until(`two opens (cam states: ${states().map((e) => e.state)})`, () => states().filter((e) => e.state === 'streaming').length >= 2);
  const sequence = states().map((e) => e.state);
  t.same(sequence.slice(0, 2), ['connecting', 'streaming'], 'connecting, then open');
  const end = states().find((e) => e.state === 'backingOff' || (e.state === 'connecting' && e.reason));
  t.match(end?.reason, /short\.avi returned no frame/, 'the end of the capture, with its reason, from the worker');
  host.stop();
  t.equal(states().at(-1)?.state, 'stopped', 'stopping the input says the camera stopped');
});

t.test('an OpenCV camera has one reader: a frame has one owner', async (t) => {
  const camera = createCamera({ binding: 'opencv', device: video });
  const first = camera.frames().subscribe();
  await t.rejects(firstValueFrom(camera.frames()), { name: 'DeviceError', message: /already has a reader/ });
  first.unsubscribe();
});
