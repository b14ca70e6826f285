// Child process of LocalVLMInput that owns the camera and OpenCV, so the agent's memory goes back when the input stops
// Here OpenCV does the capture, the face and motion analysis, and the preview JPEG.
import { Subscription } from 'rxjs';
import type { LocalVLMInputConfig } from '../../src/plugins/schemas/inputs.js';
import type { FrameAnalysis } from '../../src/vision/analyse.js';
import type { LatestWinsStats } from '../../src/pipelines/latest-wins.js';
import type { DeviceState } from '../../src/cortex/input.js';

/** Parent to worker. */
export type VlmWorkerRequest =
  /** Open the camera and analyse its frames (sent once, after `ready`). */
  | { type: 'start'; config: LocalVLMInputConfig; record: boolean }
  /** Someone watches: encode analysed frames as JPEG until this time (ms since the epoch). */
  | { type: 'watch'; until: number };

/** Worker to parent. */
export type VlmWorkerReply =
  | { type: 'ready' }
  | { type: 'result'; analysis: FrameAnalysis; at: number; jpeg?: Uint8Array; stats: LatestWinsStats }
  /** A failure the camera recovers from (its session reopens it after the wait). */
  | { type: 'device-failure'; message: string; retryInMs?: number }
  /** Each state of the camera's session here (`cam.state`), for the parent to put on the bus as its own device's. */
  | { type: 'device-state'; state: DeviceState }
  /** The analysis cannot go on (OpenCV or its cascade missing, the camera gave up): the worker exits after this. */
  | { type: 'failed'; message: string }
  | { type: 'warn'; message: string };

/** To the parent while it listens; once it has closed the channel (it is stopping) replies are dropped, never thrown. */
const send = (m: VlmWorkerReply): void => {
  if (process.connected) process.send?.(m, undefined, {}, () => undefined);
};

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** The fields of a session's state event that the bus carries (plain data, for the IPC channel). */
function deviceState(e: { [k: string]: unknown }): DeviceState {
  return {
    state: e.state as DeviceState['state'],
    ...(typeof e.attempt === 'number' ? { attempt: e.attempt } : {}),
    ...(typeof e.reason === 'string' ? { reason: e.reason } : {}),
    ...(typeof e.delay_ms === 'number' ? { delay_ms: e.delay_ms } : {}),
    ...(e.breaker === true ? { breaker: true } : {}),
  };
}

async function run(config: LocalVLMInputConfig, record: boolean, watch: { until: number }): Promise<Subscription> {
  const { loadOpenCV } = await import('../../src/vision/opencv.js');
  const { VisionAnalyser } = await import('../../src/vision/analyse.js');
  const { createCamera } = await import('../../devices/camera.js');
  const { startDeviceSession } = await import('../streams/device-session.js');
  const { sampleFps } = await import('../../src/pipelines/frame-sampler.js');
  const { latestWins } = await import('../../src/pipelines/latest-wins.js');
  const { consumeFrame, releaseFrame } = await import('../../src/pipelines/frame.js');
  const { encodeJpeg } = await import('../../src/pipelines/jpeg.js');
  const { from } = await import('rxjs');
  const cv = await loadOpenCV();
  // One thread: analysis is background work beside the agent on a small machine.
  cv.setNumThreads?.(1);
  const analyser = await VisionAnalyser.create();
  const camera = createCamera(config.camera);
  const stats: LatestWinsStats = { processed: 0, dropped: 0 };
  const subs = new Subscription();
  const frames = camera
    .frames()
    .pipe(
      sampleFps({ fps: config.fps, timeOf: (f) => f.capturedAt, onDrop: releaseFrame }),
      latestWins(
        consumeFrame((frame) =>
          from(
            (async () => {
              const analysis = await analyser.analyseMat(frame.mat);
              let jpeg: Buffer | undefined;
              if (record || Date.now() < watch.until) {
                try {
                  jpeg = (await encodeJpeg(frame, 70)).jpeg;
                } catch (err) {
                  send({ type: 'warn', message: `LocalVLMInput: preview frame not encoded: ${message(err)}` });
                }
              }
              return { analysis, at: frame.capturedAt, jpeg };
            })(),
          ),
        ),
        stats,
        releaseFrame,
      ),
    )
    .subscribe({
      next: (r) => send({ type: 'result', analysis: r.analysis, at: r.at, ...(r.jpeg ? { jpeg: r.jpeg } : {}), stats: { ...stats } }),
      error: (err) => {
        send({ type: 'failed', message: message(err) });
        process.exit(0);
      },
      complete: () => {
        send({ type: 'failed', message: 'the camera ended' });
        process.exit(0);
      },
    });
  subs.add(frames);
  // An OpenCV camera is opened and reopened by a session actor (actors/streams/device-session.ts), run
  // here where the camera lives (this process is outside the agent's tree): each of its states goes to
  // the parent (which says it on the bus as `stream` events of kind `cam`), each reopen it plans is
  // also a device failure for the parent to report, its end for good the end of the analysis.
  if (camera.device) {
    const session = startDeviceSession(camera.device, 'cam', {
      onEvent: (e) => {
        if (e.type === 'cam.state') send({ type: 'device-state', state: deviceState(e) });
        if (e.type === 'cam.state' && e.state === 'backingOff') {
          send({ type: 'device-failure', message: String(e.reason), ...(typeof e.delay_ms === 'number' ? { retryInMs: e.delay_ms } : {}) });
        } else if (e.type === 'cam.failed') {
          send({ type: 'failed', message: String(e.reason) });
          process.exit(0);
        }
      },
    });
    subs.add(() => session.stop());
  }
  subs.add(() => analyser.dispose());
  return subs;
}

function main(): void {
  const watch = { until: 0 };
  let running: Promise<Subscription> | undefined;
  process.on('message', (m: VlmWorkerRequest) => {
    if (m.type === 'watch') watch.until = m.until;
    else if (m.type === 'start' && !running) {
      running = run(m.config, m.record, watch);
      running.catch((err: unknown) => {
        send({ type: 'failed', message: message(err) });
        process.exit(0);
      });
    }
  });
  // The parent stopped the input (or died): release the camera and go, with OpenCV's memory.
  process.on('disconnect', () => process.exit(0));
  send({ type: 'ready' });
}

main();
