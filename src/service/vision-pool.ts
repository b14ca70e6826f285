// The vision worker pool of the local service: child processes own OpenCV, frames are bounded and queued, a stuck worker is replaced.
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import type { FrameAnalysis } from '../vision/analyse.js';
import { BackendError } from './backends/chat.js';
import type { WorkerReply, WorkerRequest } from './backends/vision-worker.js';

export interface VisionPoolOptions {
  workers: number;
  /** Frames waiting over all workers (beyond one running per worker). */
  queue: number;
  /** A frame taking longer ends its worker. */
  jobTimeoutMs: number;
  /** A worker with no session for this long exits (OpenCV's memory goes with it). */
  idleMs?: number;
  logger: Logger;
}

/** OpenCV or its face cascade is missing: the session reports it and closes (1011). */
export class VisionUnavailableError extends Error {}
/** Too many frames waiting: this frame is dropped with an error, the session continues. */
export class VisionBusyError extends BackendError {
  constructor(waiting: number) {
    super(503, `Vision busy: ${waiting} frames are waiting for analysis; this frame was dropped`);
  }
}

interface Job {
  resolve(a: FrameAnalysis): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

/**
 * The Node flags a worker inherits: module loaders and their settings only (`--import`, `--loader`,
 * `--require`, `--conditions`, source maps), so the test runner's TypeScript loader still works.
 * Everything else is dropped: `-e`/`--eval` and `--input-type` (a parent started from a script string
 * would run that script again instead of the worker), `--inspect` (its port is taken), and the rest.
 */
export function workerExecArgv(parent: readonly string[] = process.execArgv): string[] {
  const withValue = new Set(['--import', '--loader', '--experimental-loader', '--require', '-r', '--conditions', '-C']);
  const out: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const a = parent[i]!;
    const name = a.split('=')[0]!;
    if (withValue.has(name)) {
      if (a.includes('=')) out.push(a);
      else if (i + 1 < parent.length) out.push(a, parent[++i]!);
    } else if (a === '--enable-source-maps' || a === '--no-warnings') out.push(a);
  }
  return out;
}

/** The worker module beside this file: `.ts` under the test loader, `.js` once built. */
function workerPath(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`./backends/vision-worker.${ext}`, import.meta.url));
}

/** One child process: started on demand, replaced after a crash or a timeout. */
class Worker {
  private child: ChildProcess | undefined;
  private ready: Promise<ChildProcess> | undefined;
  private readonly jobs = new Map<number, Job>();
  sessions = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: VisionPoolOptions) {}

  get pending(): number {
    return this.jobs.size;
  }

  private start(): Promise<ChildProcess> {
    this.ready ??= new Promise<ChildProcess>((resolve, reject) => {
      const child = fork(workerPath(), [], {
        execArgv: workerExecArgv(),
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: { ...process.env, OPENCV4NODEJS_DISABLE_EXTERNAL_MEM_TRACKING: '1', OPENCV_LOG_LEVEL: process.env.OPENCV_LOG_LEVEL ?? 'ERROR' },
      });
      this.child = child;
      child.on('message', (m: WorkerReply) => {
        if (m.type === 'ready') resolve(child);
        else if (m.type === 'unavailable') reject(new VisionUnavailableError(m.message));
        else this.settle(m);
      });
      child.on('error', (err) => this.opts.logger.warn({ err }, 'vision worker error'));
      child.once('exit', (code, signal) => {
        if (this.child === child) {
          this.child = undefined;
          this.ready = undefined;
        }
        reject(new VisionUnavailableError(`vision worker exited (${signal ?? code}) before it was ready`));
        this.failAll(`vision worker exited (${signal ?? code})`);
      });
    });
    return this.ready;
  }

  async analyse(session: string, frame: Buffer, reduce: 1 | 2 | 4 | 8, id: number): Promise<FrameAnalysis> {
    this.touch();
    const child = await this.start();
    return new Promise<FrameAnalysis>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.opts.logger.warn({ ms: this.opts.jobTimeoutMs }, 'vision worker stuck: replaced');
        this.kill();
      }, this.opts.jobTimeoutMs);
      this.jobs.set(id, { resolve, reject, timer });
      const msg: WorkerRequest = { type: 'analyse', id, session, frame, reduce };
      child.send(msg, (err) => {
        if (err) this.settle({ type: 'error', id, message: `vision worker unreachable: ${err.message}` });
      });
    });
  }

  end(session: string): void {
    this.sessions = Math.max(0, this.sessions - 1);
    const msg: WorkerRequest = { type: 'end', session };
    if (this.child?.connected) this.child.send(msg, () => undefined);
    this.touch();
  }

  kill(): void {
    this.child?.kill('SIGKILL');
  }

  private settle(m: Extract<WorkerReply, { id: number }>): void {
    const job = this.jobs.get(m.id);
    if (!job) return;
    this.jobs.delete(m.id);
    clearTimeout(job.timer);
    if (m.type === 'result') job.resolve(m.analysis);
    else job.reject(new Error(m.message));
    this.touch();
  }

  private failAll(why: string): void {
    for (const [id] of this.jobs) this.settle({ type: 'error', id, message: `Vision backend failed: ${why}` });
  }

  /** A worker without sessions and jobs exits after idleMs; the next frame starts a new one. */
  private touch(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
    if (this.sessions > 0 || this.jobs.size > 0 || !this.opts.idleMs) return;
    this.idleTimer = setTimeout(() => {
      if (this.sessions === 0 && this.jobs.size === 0) this.stop();
    }, this.opts.idleMs);
    this.idleTimer.unref();
  }

  stop(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const child = this.child;
    this.child = undefined;
    this.ready = undefined;
    if (child && child.exitCode === null) {
      child.disconnect?.();
      const t = setTimeout(() => child.kill('SIGKILL'), 1000);
      t.unref();
      child.once('exit', () => clearTimeout(t));
    }
  }
}

/** A session's handle: frames of one session go to one worker (its motion state lives there). */
export interface VisionSession {
  analyse(frame: Buffer, reduce: 1 | 2 | 4 | 8): Promise<FrameAnalysis>;
  close(): void;
}

/**
 * Decoding and detection never run on the service's event loop: each frame goes to a worker
 * process, at most `workers` frames are analysed at once and at most `queue` more wait (past that
 * a frame is refused with VisionBusyError, the session continues). A frame running longer than
 * `jobTimeoutMs` kills its worker; the next frame starts a fresh one.
 */
export class VisionPool {
  private readonly workers: Worker[];
  private seq = 0;
  private closed = false;

  constructor(private readonly opts: VisionPoolOptions) {
    this.workers = Array.from({ length: Math.max(1, opts.workers) }, () => new Worker(opts));
  }

  get pending(): number {
    return this.workers.reduce((n, w) => n + w.pending, 0);
  }

  open(sessionId: string): VisionSession {
    const worker = this.workers.reduce((a, b) => (b.sessions < a.sessions ? b : a));
    worker.sessions++;
    let ended = false;
    return {
      analyse: (frame, reduce) => {
        if (this.closed) return Promise.reject(new VisionUnavailableError('the service is stopping'));
        if (this.pending >= this.workers.length + this.opts.queue) return Promise.reject(new VisionBusyError(this.pending - this.workers.length));
        return worker.analyse(sessionId, frame, reduce, ++this.seq);
      },
      close: () => {
        if (ended) return;
        ended = true;
        worker.end(sessionId);
      },
    };
  }

  close(): void {
    this.closed = true;
    for (const w of this.workers) w.stop();
  }
}
