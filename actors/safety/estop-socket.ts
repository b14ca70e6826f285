// The local e-stop socket of `cortexd estop`: a Unix socket that only root and the service's group can open (file mode and group, enforced by the kernel).
import { readFileSync, unlinkSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { fromCallback, type AnyActorRef, type EventObject } from 'xstate';
import type { AgentBus } from '../../src/cortex/events.js';
import { describeError } from '../../src/errors.js';
import { EstopGate } from './estop-gate.js';
import type { EstopWorkerData, FromEstopWorker, ToEstopWorker } from './estop-socket-worker.js';
import { GovernorView, type SafetyStatus } from './status.js';

/*
 * Access control. connect(2) on a Unix socket needs write permission on the socket file and search
 * permission on every directory above it, checked by the kernel against the caller's uid and groups;
 * root passes. The socket is made mode 0660 (owner and group may connect, others may not) with the
 * configured group (default: this process's group, `cortexd` under the systemd unit), in a directory
 * made 0750 with the same group when the agent creates it. It is bound under a temporary name, given
 * its group and mode, then renamed into place, so the path never names a socket with other rights.
 * No peer-credential lookup is needed on top of that.
 *
 * Protocol: one command per line, one answer line each.
 *   `ESTOP [reason]`  ->  `OK latched`
 *   `RELEASE`         ->  `OK released` | `ERR no emergency stop is latched`
 *   `STATUS`          ->  `OK {"estop":...,"motion":"still",...}` (JSON of SafetyStatus)
 * Anything else is answered `ERR unknown command ...`. A line over 1 KiB, or 10 s idle, ends the connection.
 *
 * Its own thread (estop-socket-worker.ts). The socket is served by a worker thread, so a busy main
 * thread (a flood of fleet commands or WebSim lines, a process start, a collection) never delays
 * it. ESTOP latches the shared gate (estop-gate.ts) and is answered at once: from that moment the
 * governor refuses every motion command (it takes the gate, synchronously, before deciding on one);
 * the main thread then latches the governor, which sends the stop to what moves, on its next turn.
 * STATUS is the governor's status as last posted by the main thread, with a socket latch it has not
 * taken yet applied. RELEASE is decided by the governor on the main thread and answered after it.
 */

export interface EstopSocketOptions {
  path: string;
  /** Group name or id allowed besides root; default the process's group. */
  group?: string | number;
}

export interface EstopSocketInput {
  options: EstopSocketOptions | undefined;
  /** The governor (this actor's parent): commands are sent to it, its status followed by subscribing to it. */
  governor: AnyActorRef;
  /** The governor's status when it invoked this actor (its snapshot stream only says what changes after). */
  status: SafetyStatus;
  logger: Logger;
  bus: AgentBus;
  /** The latch shared with the socket's thread, which the governor checks before every motion command. */
  gate?: EstopGate;
}

/** The id of group `group` (a name from /etc/group, or a number). */
export function groupId(group: string | number | undefined): number {
  if (group === undefined) return process.getgid?.() ?? 0;
  if (typeof group === 'number') return group;
  if (/^\d+$/.test(group)) return Number(group);
  for (const line of readFileSync('/etc/group', 'utf8').split('\n')) {
    const [name, , gid] = line.split(':');
    if (name === group && gid !== undefined) return Number(gid);
  }
  throw new Error(`no group named "${group}" in /etc/group`);
}

/** The socket thread's script: the compiled file next to this one, or the source under a TypeScript loader (tests). */
function workerUrl(): URL {
  const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
  return new URL(`./estop-socket-worker.${ext}`, import.meta.url);
}

/** The answer to RELEASE, decided by the governor on this (the main) thread. */
async function release(input: EstopSocketInput, gate: EstopGate, governor: GovernorView): Promise<string> {
  // A latch the socket set but the governor has not taken yet is taken first: the release frees that one too.
  const pending = gate.take();
  if (pending) input.governor.send({ type: 'safety.estop', source: 'socket', reason: pending.reason });
  const r = await governor.release('socket');
  return r.ok ? 'OK released' : `ERR ${r.reason ?? 'still latched'}`;
}

/**
 * A child of the governor: runs the socket's thread while the agent runs, removes the socket file
 * when it stops. The thread latches `gate` and answers ESTOP and STATUS itself; this side turns a
 * latch into the governor's (`safety.estop`), answers RELEASE through the governor and keeps the
 * thread's copy of the status current (posted when it changes). A stale file left by a killed agent
 * is replaced; a socket another running agent listens on is not touched (reported, and this agent
 * runs without the socket source).
 */
export const estopSocketLogic = fromCallback<EventObject, EstopSocketInput>(({ input }) => {
  const options = input.options;
  if (!options) return;
  const gate = input.gate ?? new EstopGate();
  let stopped = false;
  let listening = false;
  const fail = (message: string) => {
    const line = `e-stop socket ${options.path} unavailable: ${message}`;
    input.logger.error(line);
    input.bus.emit({ type: 'error', at: Date.now(), source: 'safety', message: line });
  };
  let gid: number;
  try {
    gid = groupId(options.group);
  } catch (err) {
    fail(describeError(err));
    return;
  }
  const data: EstopWorkerData = { path: options.path, gid, gate: gate.buffer };
  const worker = new Worker(workerUrl(), { workerData: data });
  const post = (m: ToEstopWorker) => {
    if (!stopped) worker.postMessage(m);
  };
  // The thread's copy of the status, posted when it changes; `taken` tells it which socket latches it includes.
  const publish = (status: SafetyStatus) => post({ type: 'status', status: status as unknown as Record<string, unknown>, taken: gate.taken() });
  const feed = new GovernorView(input.governor, input.status, publish);
  publish(input.status);
  worker.on('message', (m: FromEstopWorker) => {
    if (stopped) return;
    if (m.type === 'estop') {
      const pending = gate.take();
      if (pending) input.governor.send({ type: 'safety.estop', source: 'socket', reason: pending.reason });
      // Posted again with the taken latch, also when the governor was latched already (its status did not change).
      publish(feed.status);
    } else if (m.type === 'release') {
      void release(input, gate, feed).then((line) => {
        // The status first: a STATUS behind the RELEASE on the same connection shows the release.
        publish(feed.status);
        post({ type: 'answer', id: m.id, line });
      });
    } else if (m.type === 'listening') {
      listening = true;
      input.logger.info(`e-stop socket at ${options.path} (root and group ${gid}, answered on its own thread ${m.priority})`);
    } else fail(m.message);
  });
  worker.on('error', (err) => fail(describeError(err)));
  return () => {
    stopped = true;
    feed.close();
    // The file goes now, not when the thread gets to it: the process may exit first.
    if (listening) {
      try {
        unlinkSync(options.path);
      } catch {
        /* already gone */
      }
    }
    worker.postMessage({ type: 'close' } satisfies ToEstopWorker);
    // A thread that does not end on its own within a second is ended.
    const t = setTimeout(() => void worker.terminate(), 1000);
    t.unref();
    worker.once('exit', () => clearTimeout(t));
  };
});
