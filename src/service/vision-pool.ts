// The vision worker pool of the local service: child processes own OpenCV, frames wait in per-key queues served in turn, a stuck or swollen worker is replaced.
import { fork, type ChildProcess } from 'node:child_process';
import { setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { opencvWorkerEnv, residentBytes, workerExecArgv } from '../worker-process.js';
import type { FrameAnalysis } from '../vision/analyse.js';
import { BackendError } from './backends/chat.js';
import type { WorkerReply, WorkerRequest } from './backends/vision-worker.js';

export interface VisionPoolOptions {
  workers: number;
  /** Frames waiting over all workers (beyond one running per worker). */
  queue: number;
  /** Frames of one key waiting (the oldest is dropped for a newer one: latest frame wins). Default 2. */
  queuePerKey?: number;
  /** A frame taking longer ends its worker. */
  jobTimeoutMs: number;
  /**
   * Resident memory a worker may use: past it while a frame runs the worker is killed (the frame
   * fails); past half the headroom between its memory at start and this bound once a frame is done,
   * the worker is replaced, so memory a decode took is given back instead of kept. Default 512 MiB.
   */
  memoryBytes?: number;
  /** A worker with no session for this long exits (OpenCV's memory goes with it). */
  idleMs?: number;
  logger: Logger;
}

export { residentBytes, workerExecArgv };

/** OpenCV or its face cascade is missing: the session reports it and closes (1011). */
export class VisionUnavailableError extends Error {}
/** Too many frames waiting: this frame is dropped with an error, the session continues. */
export class VisionBusyError extends BackendError {
  constructor(waiting: number) {
    super(503, `Vision busy: ${waiting} frames are waiting for analysis; this frame was dropped`);
  }
}
/** The worker passed its memory bound while analysing: it was killed and this frame failed. */
export class VisionMemoryError extends BackendError {
  constructor(limitBytes: number) {
    super(503, `Vision backend failed: analysing the frame took more than ${Math.round(limitBytes / 1048576)} MiB; the worker was replaced`);
  }
}

const DEFAULT_MEMORY_BYTES = 512 * 1024 * 1024;
/** Keys with a frame waiting at once, each keeping its one place whatever the queue bound (so at most this many frames, plus `queue`, wait). */
const MAX_KEYS_WAITING = 32;
/**
 * Niceness of a vision worker: below the service's event loop (chat, sockets) when both want the CPU,
 * not so low that other programs on the machine starve it.
 */
const WORKER_NICE = 5;
/** Time for a worker to load OpenCV and its cascade and say it is ready (slow on a loaded Pi). */
const WORKER_START_MS = 60_000;
/** How often a running frame's worker memory is read. */
const MEMORY_POLL_MS = 50;

interface Job {
  resolve(a: FrameAnalysis): void;
  reject(e: Error): void;
  /** Set once the worker is ready and the frame sent. */
  timer: NodeJS.Timeout | undefined;
}

/** The worker module beside this file: `.ts` under the test loader, `.js` once built. */
function workerPath(): string {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return fileURLToPath(new URL(`./backends/vision-worker.${ext}`, import.meta.url));
}

/** One child process: started on demand, one frame at a time, replaced after a crash, a timeout or too much memory. */
class Worker {
  private child: ChildProcess | undefined;
  private ready: Promise<ChildProcess> | undefined;
  private readonly jobs = new Map<number, Job>();
  sessions = 0;
  /** Resident memory of the current worker once it was ready. */
  private baseRss = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  /** Called when a frame is done (the pool then hands this worker the next one). */
  onFree: () => void = () => undefined;

  constructor(private readonly opts: VisionPoolOptions) {}

  get busy(): boolean {
    return this.jobs.size > 0;
  }

  private get memoryBytes(): number {
    return this.opts.memoryBytes ?? DEFAULT_MEMORY_BYTES;
  }

  private start(): Promise<ChildProcess> {
    this.ready ??= new Promise<ChildProcess>((resolve, reject) => {
      const child = fork(workerPath(), [], {
        execArgv: workerExecArgv(),
        serialization: 'advanced',
        stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
        env: opencvWorkerEnv(),
      });
      this.child = child;
      // A worker that never becomes ready (a wedged OpenCV load) is killed: its exit rejects the start.
      const starting = setTimeout(() => child.kill('SIGKILL'), WORKER_START_MS);
      starting.unref();
      child.once('message', () => clearTimeout(starting));
      child.once('exit', () => clearTimeout(starting));
      child.on('message', (m: WorkerReply) => {
        if (m.type === 'ready') {
          this.baseRss = residentBytes(child.pid);
          // Analysis is background work: the service's own event loop (chat, sockets) comes first for
          // the CPU. Starting (loading OpenCV) runs at the service's priority, so it is not starved.
          try {
            if (child.pid) setPriority(child.pid, WORKER_NICE);
          } catch {
            // Not allowed here: the worker keeps the service's priority.
          }
          resolve(child);
        } else if (m.type === 'unavailable') reject(new VisionUnavailableError(m.message));
        else this.settle(m);
      });
      child.on('error', (err) => this.opts.logger.warn({ err }, 'vision worker error'));
      child.once('exit', (code, signal) => {
        reject(new VisionUnavailableError(`vision worker exited (${signal ?? code}) before it was ready`));
        // A worker that was stopped or replaced has no job left: the running job belongs to its successor.
        if (this.child !== child) return;
        this.child = undefined;
        this.ready = undefined;
        this.failAll(`vision worker exited (${signal ?? code})`);
      });
    });
    return this.ready;
  }

  async analyse(session: string, frame: Buffer, reduce: 1 | 2 | 4 | 8, id: number): Promise<FrameAnalysis> {
    this.touch();
    const job: Job = { resolve: () => undefined, reject: () => undefined, timer: undefined };
    const settled = new Promise<FrameAnalysis>((resolve, reject) => {
      job.resolve = resolve;
      job.reject = reject;
    });
    this.jobs.set(id, job);
    // Handled below or by the caller; this keeps a rejection that comes while the worker starts from counting as unhandled.
    settled.catch(() => undefined);
    try {
      const child = await this.start();
      // The frame's time starts once the worker is ready: starting OpenCV is not the frame's doing.
      if (this.jobs.has(id))
        job.timer = setTimeout(() => {
          this.opts.logger.warn({ ms: this.opts.jobTimeoutMs }, 'vision worker stuck: replaced');
          this.kill();
        }, this.opts.jobTimeoutMs);
      const watch = setInterval(() => {
        if (residentBytes(child.pid) <= this.memoryBytes) return;
        this.opts.logger.warn({ limit: this.memoryBytes }, 'vision worker over its memory bound: replaced');
        this.fail(id, new VisionMemoryError(this.memoryBytes));
        child.kill('SIGKILL');
      }, MEMORY_POLL_MS);
      const msg: WorkerRequest = { type: 'analyse', id, session, frame, reduce };
      child.send(msg, (err) => {
        if (err) this.settle({ type: 'error', id, message: `vision worker unreachable: ${err.message}` });
      });
      return await settled.finally(() => clearInterval(watch));
    } catch (err) {
      this.fail(id, err instanceof Error ? err : new Error(String(err)));
      return settled;
    }
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
    if (m.type === 'result') this.finish(m.id, (job) => job.resolve(m.analysis));
    else this.fail(m.id, new Error(m.message));
  }

  private fail(id: number, err: Error): void {
    this.finish(id, (job) => job.reject(err));
  }

  private finish(id: number, how: (job: Job) => void): void {
    const job = this.jobs.get(id);
    if (!job) return;
    this.jobs.delete(id);
    clearTimeout(job.timer);
    // Memory a decode took stays with the process: a worker left with more than half its headroom
    // (between its memory at start and its bound) in use is replaced now, and the memory goes with it.
    const rss = residentBytes(this.child?.pid);
    if (rss > this.baseRss + (this.memoryBytes - this.baseRss) / 2) {
      this.opts.logger.info({ rss }, 'vision worker kept too much memory: replaced');
      this.stop();
    }
    how(job);
    this.touch();
    this.onFree();
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

  /**
   * Ends the worker process. A frame it still had fails now with `reason` (the exit of a stopped worker
   * is not reported to its frames): a frame left waiting would keep its timers, and the process, alive.
   */
  stop(reason: Error = new VisionUnavailableError('the vision worker was stopped')): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    const child = this.child;
    this.child = undefined;
    this.ready = undefined;
    for (const [id] of this.jobs) this.fail(id, reason);
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

interface Waiting {
  key: string;
  session: string;
  worker: Worker;
  frame: Buffer;
  reduce: 1 | 2 | 4 | 8;
  resolve(a: FrameAnalysis): void;
  reject(e: Error): void;
}

/**
 * Decoding and detection never run on the service's event loop: each frame goes to a worker
 * process (at a lower CPU priority than the service), one frame per worker at a time. Frames wait
 * in a queue per API key, and a free worker takes the next frame of the key served least recently,
 * so a key with many sockets and fast frames gets the same turns as a key with one. A key's first
 * waiting frame always gets a place (up to 32 keys waiting); further frames of one key wait only
 * while fewer than `queue` frames wait in all and the key has fewer than `queuePerKey`, otherwise
 * a newer frame replaces the key's oldest (latest frame wins). Dropped frames get VisionBusyError;
 * the session continues. A frame running longer than `jobTimeoutMs`, or a worker over `memoryBytes`,
 * kills the worker; the next frame starts a fresh one.
 */
export class VisionPool {
  private readonly workers: Worker[];
  private readonly waiting = new Map<string, Waiting[]>();
  private waitingCount = 0;
  private readonly lastServed = new Map<string, number>();
  private served = 0;
  private seq = 0;
  private closed = false;

  constructor(private readonly opts: VisionPoolOptions) {
    this.workers = Array.from({ length: Math.max(1, opts.workers) }, () => new Worker(opts));
    for (const w of this.workers) w.onFree = () => this.dispatch();
  }

  /** Frames waiting for a worker, over all keys. */
  get pending(): number {
    return this.waitingCount;
  }

  open(sessionId: string, key = sessionId): VisionSession {
    const worker = this.workers.reduce((a, b) => (b.sessions < a.sessions ? b : a));
    worker.sessions++;
    let ended = false;
    return {
      analyse: (frame, reduce) => {
        if (this.closed) return Promise.reject(new VisionUnavailableError('the service is stopping'));
        return new Promise<FrameAnalysis>((resolve, reject) => {
          this.enqueue({ key, session: sessionId, worker, frame, reduce, resolve, reject });
          this.dispatch();
        });
      },
      close: () => {
        if (ended) return;
        ended = true;
        for (const list of this.waiting.values())
          for (const w of [...list]) if (w.session === sessionId) this.drop(w, new VisionUnavailableError('the session closed'));
        worker.end(sessionId);
      },
    };
  }

  private enqueue(job: Waiting): void {
    const mine = this.waiting.get(job.key) ?? [];
    if (mine.length === 0) {
      // A key's first waiting frame always gets a place (within MAX_KEYS_WAITING keys): its turn comes after one frame of each other key.
      if (this.waitingCount >= Math.max(this.opts.queue, MAX_KEYS_WAITING)) return job.reject(new VisionBusyError(this.waitingCount));
    } else if (mine.length >= (this.opts.queuePerKey ?? 2) || this.waitingCount >= this.opts.queue) {
      // More frames of one key wait only while the queue has room and the key its share; else the newest replaces the key's oldest.
      this.drop(mine[0]!, new VisionBusyError(this.waitingCount));
    }
    const list = this.waiting.get(job.key) ?? [];
    list.push(job);
    this.waiting.set(job.key, list);
    this.waitingCount++;
  }

  private drop(w: Waiting, err: Error): void {
    const list = this.waiting.get(w.key);
    const i = list?.indexOf(w) ?? -1;
    if (!list || i < 0) return;
    list.splice(i, 1);
    if (list.length === 0) this.waiting.delete(w.key);
    this.waitingCount--;
    w.reject(err);
  }

  /** Hands each free worker the next frame of the key served least recently among those with a frame for it. */
  private dispatch(): void {
    for (const worker of this.workers) {
      if (worker.busy || this.closed) continue;
      let next: Waiting | undefined;
      for (const [k, list] of this.waiting) {
        const w = list.find((x) => x.worker === worker);
        if (w && (next === undefined || (this.lastServed.get(k) ?? 0) < (this.lastServed.get(next.key) ?? 0))) next = w;
      }
      if (!next) continue;
      const list = this.waiting.get(next.key)!;
      list.splice(list.indexOf(next), 1);
      if (list.length === 0) this.waiting.delete(next.key);
      this.waitingCount--;
      this.lastServed.set(next.key, ++this.served);
      const job = next;
      worker.analyse(job.session, job.frame, job.reduce, ++this.seq).then(job.resolve, job.reject);
    }
    for (const k of this.lastServed.keys()) if (!this.waiting.has(k) && this.lastServed.size > 64) this.lastServed.delete(k);
  }

  close(): void {
    this.closed = true;
    for (const list of this.waiting.values()) for (const w of list) w.reject(new VisionUnavailableError('the service is stopping'));
    this.waiting.clear();
    this.waitingCount = 0;
    const stopping = new VisionUnavailableError('the service is stopping');
    for (const w of this.workers) w.stop(stopping);
  }
}
