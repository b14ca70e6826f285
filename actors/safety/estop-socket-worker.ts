// The e-stop socket's own thread: listens on the Unix socket, latches the shared e-stop gate and answers at once, whatever the agent's main thread is doing.
import { chmodSync, chownSync, existsSync, mkdirSync, readlinkSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { getPriority, setPriority } from 'node:os';
import { dirname } from 'node:path';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import { EstopGate } from './estop-gate.js';

/** What the main thread gives the socket's thread. */
export interface EstopWorkerData {
  path: string;
  gid: number;
  gate: SharedArrayBuffer;
}

/** Main thread -> socket thread. `status`: the governor's status as of `taken` requests of the gate. */
export type ToEstopWorker =
  | { type: 'status'; status: Record<string, unknown>; taken: number }
  | { type: 'answer'; id: number; line: string }
  | { type: 'close' };

/** Socket thread -> main thread. */
export type FromEstopWorker =
  | { type: 'listening'; priority: string }
  | { type: 'failed'; message: string }
  | { type: 'estop' }
  | { type: 'release'; id: number };

const MAX_LINE = 1024;
const IDLE_MS = 10_000;
/** The nice value the thread asks for: ahead of the agent's own threads and ordinary processes. */
export const ESTOP_THREAD_NICE = -10;

/**
 * Runs this thread (only this one: on Linux a thread id names one thread for setpriority) at
 * ESTOP_THREAD_NICE, so that on a loaded machine the scheduler wakes it first when a command comes.
 * Allowed for root, with CAP_SYS_NICE or a LimitNICE= in the unit; otherwise the thread keeps the
 * process's priority. Returns what happened, for the log.
 */
function raisePriority(): string {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isInteger(tid) || tid <= 0) return 'at the process priority (no thread id)';
    if (getPriority(tid) <= ESTOP_THREAD_NICE) return `at nice ${getPriority(tid)}`;
    setPriority(tid, ESTOP_THREAD_NICE);
    return `at nice ${getPriority(tid)}`;
  } catch (err) {
    return `at the process priority (nice ${ESTOP_THREAD_NICE} refused: ${(err as NodeJS.ErrnoException).code ?? String(err)})`;
  }
}

/** Resolves when `path` accepts a connection (another agent listens there), false when nothing does. */
function inUse(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/** What the thread keeps: the shared gate, the governor's last status, and the RELEASE requests waiting for the main thread's answer. */
interface WorkerState {
  readonly gate: EstopGate;
  status: { value: Record<string, unknown>; taken: number };
  nextId: number;
  readonly releases: Map<number, (line: string) => void>;
  readonly send: (m: FromEstopWorker) => void;
}

/** The status to show: the governor's, with a request it has not taken yet applied (the latch is in place). */
function current({ status, gate }: WorkerState): Record<string, unknown> {
  if (status.taken >= gate.requested() || status.value.estop) return status.value;
  const last = gate.last();
  return { ...status.value, estop: { source: 'socket', reason: last.reason, at: last.at } };
}

/** Answers one command line: ESTOP latches at once, RELEASE waits for the governor's answer, STATUS reads the last status. */
function answer(state: WorkerState, line: string): string | Promise<string> {
  const [word = '', ...rest] = line.split(/\s+/);
  const command = word.toUpperCase();
  if (command === 'ESTOP') {
    state.gate.request(rest.join(' ').slice(0, 200) || 'cortexd estop');
    state.send({ type: 'estop' });
    return 'OK latched';
  }
  if (command === 'RELEASE') {
    // A person's decision, made by the governor on the main thread: its answer is waited for.
    const id = state.nextId++;
    state.send({ type: 'release', id });
    return new Promise((resolve) => state.releases.set(id, resolve));
  }
  if (command === 'STATUS') return `OK ${JSON.stringify(current(state))}`;
  return `ERR unknown command "${word.slice(0, 40)}" (ESTOP [reason], RELEASE, STATUS)`;
}

/** One connection: command lines in, one answer line each, in order (a RELEASE's answer holds the later ones back). */
function serve(state: WorkerState, conn: Socket): void {
  conn.setEncoding('utf8');
  conn.setTimeout(IDLE_MS, () => conn.destroy());
  conn.on('error', () => conn.destroy());
  let buf = '';
  let waiting: Promise<void> | undefined;
  const write = (text: string) => {
    if (!conn.destroyed) conn.write(`${text}\n`);
  };
  conn.on('data', (chunk: string) => {
    buf += chunk;
    if (buf.length > MAX_LINE && !buf.includes('\n')) {
      conn.end('ERR line too long\n');
      return;
    }
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl).replace(/\r$/, '').trim();
      buf = buf.slice(nl + 1);
      if (!line) continue;
      if (waiting) {
        const before = waiting;
        waiting = before.then(async () => write(await answer(state, line)));
        continue;
      }
      const reply = answer(state, line);
      if (typeof reply === 'string') write(reply);
      else waiting = reply.then(write).finally(() => (waiting = undefined));
    }
  });
}

/** Makes the socket's folder (group `gid`, 0750) and clears a stale socket there; throws when a file or a live agent is in the way. */
async function clearTheWay(path: string, gid: number): Promise<void> {
  const dir = dirname(path);
  if (!existsSync(dir)) {
    mkdirSync(dir, { recursive: true, mode: 0o750 });
    chownSync(dir, -1, gid);
    chmodSync(dir, 0o750);
  }
  if (existsSync(path)) {
    if (!statSync(path).isSocket()) throw new Error('a file that is not a socket is in the way');
    if (await inUse(path)) throw new Error('another agent listens on it');
    unlinkSync(path);
  }
}

/** Binds `server` under a temporary name, gives it its group and mode, then renames it: the socket appears complete. */
async function listenComplete(server: Server, path: string, gid: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(tmp, () => {
      server.off('error', reject);
      resolve();
    });
  });
  try {
    chownSync(tmp, -1, gid);
    chmodSync(tmp, 0o660);
    renameSync(tmp, path);
  } catch (err) {
    unlinkSync(tmp);
    throw err;
  }
}

/** Runs the thread: serves the socket, takes the main thread's status and answers, and closes when told. */
function run(port: MessagePort, data: EstopWorkerData): void {
  const state: WorkerState = {
    gate: new EstopGate(data.gate),
    status: { value: { estop: null, motion: 'still', stopping: false, faults: [] }, taken: 0 },
    nextId: 1,
    releases: new Map(),
    send: (m) => port.postMessage(m),
  };
  const server = createServer((conn) => serve(state, conn));
  let listening = false;
  let closed = false;
  const close = () => {
    closed = true;
    server.close();
    if (listening) {
      try {
        unlinkSync(data.path);
      } catch {
        /* already gone (the main thread removes it too) */
      }
    }
    for (const resolve of state.releases.values()) resolve('ERR the agent is stopping');
    state.releases.clear();
    port.close();
  };

  port.on('message', (m: ToEstopWorker) => {
    if (m.type === 'status') state.status = { value: m.status, taken: m.taken };
    else if (m.type === 'answer') {
      state.releases.get(m.id)?.(m.line);
      state.releases.delete(m.id);
    } else close();
  });

  const start = async () => {
    await clearTheWay(data.path, data.gid);
    if (closed) return;
    await listenComplete(server, data.path, data.gid);
    listening = true;
    // Told to close while starting: the socket just made goes again.
    if (closed) return close();
    server.on('error', (err) => state.send({ type: 'failed', message: err.message }));
    state.send({ type: 'listening', priority: raisePriority() });
  };
  start().catch((err: unknown) => {
    state.send({ type: 'failed', message: err instanceof Error ? err.message : String(err) });
    server.close();
  });
}

if (parentPort) run(parentPort, workerData as EstopWorkerData);
