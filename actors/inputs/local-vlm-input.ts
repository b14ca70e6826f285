// LocalVLMInput: faces and motion described on the robot with OpenCV (no network); the newest description becomes the "Vision: ..." line.
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Observable, Subject, map, tap } from 'rxjs';
import type { DeviceState, InputContext, InputFactory, InputMessage } from '../../src/cortex/input.js';
import { LocalVLMInputSchema, type LocalVLMInputConfig } from '../../src/plugins/schemas/inputs.js';
import type { LatestWinsStats } from '../../src/pipelines/latest-wins.js';
import { describe, visionContext, type FrameAnalysis } from '../../src/vision/analyse.js';
import { opencvWorkerEnv, workerExecArgv } from '../../src/worker-process.js';
import { visionChanged } from '../../src/cortex/wake.js';
import { BufferedInput } from './buffered-input.js';
import type { VlmWorkerReply, VlmWorkerRequest } from './local-vlm-worker.js';

export { LocalVLMInputSchema, type LocalVLMInputConfig };

export interface LocalVisionRaw {
  text: string;
  analysis: FrameAnalysis;
  /** Capture time of the analysed frame, ms since the epoch. */
  at: number;
}

/** The worker module beside this file: `.ts` under the test loader, `.js` once built. */
function workerPath(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`./local-vlm-worker.${ext}`, import.meta.url));
}

/** Time for the worker to load OpenCV and its cascade and open the camera (slow on a loaded Pi). */
const WORKER_START_MS = 60_000;

/**
 * Listening starts a child process (actors/inputs/local-vlm-worker.ts) that opens the camera and runs
 * the OpenCV analysis; unsubscribing (the input stops, the mode is left) ends it, and OpenCV's code,
 * buffers and threads go with it. In the worker frames are sampled to `fps` and analysed one at a
 * time, latest frame wins (`stats.dropped` counts skipped frames). A crash of the worker is a failure
 * of this input (the input actor restarts it with its backoff); an OpenCV camera is opened and
 * reopened in the worker by a session actor (actors/streams/device-session.ts), whose states reach
 * the bus here as `stream` events of kind `cam` (`deviceStates$`) and its reopens as errors
 * (`deviceFailures$`). The description is the service's (`describe`), so the prompt reads the same
 * offline and hosted. The buffer keeps only the newest; messages are `final: false`.
 */
export class LocalVlmInput extends BufferedInput<LocalVisionRaw> {
  private readonly failures = new Subject<{ message: string; retryInMs?: number }>();
  /** Reopens of the worker's OpenCV camera planned by its session actor there, for the bus. */
  get deviceFailures$() {
    return this.failures.asObservable();
  }

  private readonly states = new Subject<{ kind: 'cam'; state: DeviceState }>();
  /** The states of the worker's camera session, as VLMInput's `device:camera` child says its own. */
  get deviceStates$() {
    return this.states.asObservable();
  }

  readonly stats: LatestWinsStats = { processed: 0, dropped: 0 };
  /** Process id of the running analysis worker, undefined while not listening. */
  workerPid: number | undefined;
  private worker: { send(m: VlmWorkerRequest): void } | undefined;

  constructor(
    private readonly config: LocalVLMInputConfig,
    private readonly ctx?: Pick<InputContext, 'logger' | 'signal' | 'publishContext'> & Partial<Pick<InputContext, 'media'>>,
  ) {
    super({
      type: 'LocalVLMInput',
      descriptor: config.descriptor ?? 'Vision',
      bufferSize: config.buffer_size,
      wake: config.wake,
      policy: 'latest',
      ...(ctx?.logger ? { logger: ctx.logger } : {}),
      ...(ctx?.signal ? { signal: ctx.signal } : {}),
    });
  }

  protected source(): Observable<LocalVisionRaw> {
    return this.analyses().pipe(
      map(({ analysis, at }) => ({ text: describe(analysis), analysis, at })),
      tap((raw) => this.publish(raw.analysis)),
    );
  }

  /** One worker per subscription: its results, its failure as this stream's error; unsubscribing ends it. */
  private analyses(): Observable<{ analysis: FrameAnalysis; at: number }> {
    return new Observable((subscriber) => {
      const child = fork(workerPath(), [], {
        execArgv: workerExecArgv(),
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: opencvWorkerEnv(),
      });
      this.workerPid = child.pid;
      let done = false;
      const send = (m: VlmWorkerRequest) => {
        if (child.connected) child.send(m, (err) => err && undefined);
      };
      this.worker = { send };
      const starting = setTimeout(() => child.kill('SIGKILL'), WORKER_START_MS);
      starting.unref();
      const fail = (why: string) => {
        if (done) return;
        done = true;
        subscriber.error(new Error(`LocalVLMInput: ${why}`));
      };
      child.on('message', (m: VlmWorkerReply) => {
        if (m.type === 'ready') send({ type: 'start', config: this.config, record: this.ctx?.media !== undefined });
        else if (m.type === 'result') {
          clearTimeout(starting);
          Object.assign(this.stats, m.stats);
          this.keepJpeg(m.jpeg, m.at);
          subscriber.next({ analysis: m.analysis, at: m.at });
        } else if (m.type === 'device-failure') {
          clearTimeout(starting);
          this.failures.next({ message: m.message, ...(m.retryInMs !== undefined ? { retryInMs: m.retryInMs } : {}) });
        } else if (m.type === 'device-state') this.states.next({ kind: 'cam', state: m.state });
        else if (m.type === 'warn') this.logger?.warn(m.message);
        else if (m.type === 'failed') fail(m.message);
      });
      child.on('error', (err) => fail(`vision worker: ${err.message}`));
      child.once('exit', (code, signal) => {
        clearTimeout(starting);
        fail(`vision worker exited (${signal ?? code})`);
      });
      return () => {
        done = true;
        clearTimeout(starting);
        if (this.workerPid === child.pid) {
          this.workerPid = undefined;
          this.worker = undefined;
        }
        // Closing the channel makes the worker exit; one that does not within a second is killed.
        if (child.exitCode === null && child.signalCode === null) {
          if (child.connected) child.disconnect();
          const t = setTimeout(() => child.kill('SIGKILL'), 1000);
          t.unref();
          child.once('exit', () => clearTimeout(t));
        }
      };
    });
  }

  private published = '';
  private lastJpeg: { jpeg: Buffer; at: number } | undefined;

  /** The newest analysed frame as JPEG; asking keeps frames encoded for the next 5 s (the first ask may get none yet). */
  readonly preview = {
    frame: async (): Promise<{ jpeg: Buffer; at: number } | undefined> => {
      this.worker?.send({ type: 'watch', until: Date.now() + 5000 });
      return this.lastJpeg;
    },
  };

  /** Keeps the frame the worker encoded (someone watches or a recording runs) and hands it to the recording. */
  private keepJpeg(jpeg: Uint8Array | undefined, at: number): void {
    if (!jpeg) {
      this.lastJpeg = undefined;
      return;
    }
    const buf = Buffer.isBuffer(jpeg) ? jpeg : Buffer.from(jpeg.buffer, jpeg.byteOffset, jpeg.byteLength);
    this.lastJpeg = { jpeg: buf, at };
    this.ctx?.media?.frame(this.type, buf, at);
  }

  /** Context for `context_aware` rules when it changes: `faces` (how many are seen) and `motion` (none, slight, strong). */
  private publish(a: FrameAnalysis): void {
    const values = visionContext(a.faces.length, a.motion);
    const key = JSON.stringify(values);
    if (key === this.published) return;
    this.published = key;
    this.ctx?.publishContext?.(values);
  }

  /** A meaningful change: the count of faces or the motion level (`wake_on`), not the percentage of motion. */
  protected override changed(previous: string, next: string): boolean {
    return visionChanged(previous, next, this.config.wake_on);
  }

  protected toMessage(raw: LocalVisionRaw): InputMessage | undefined {
    return { timestamp: raw.at, text: raw.text, final: false };
  }
}

/** The LocalVLMInput plugin (its descriptor is in src/plugins/inputs.ts). */
export const createLocalVlmInput: InputFactory = (raw, ctx) => {
  const config = LocalVLMInputSchema.parse(raw ?? {});
  return new LocalVlmInput(config, ctx);
};
