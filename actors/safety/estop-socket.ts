// The local e-stop socket of `cortexd estop`: a Unix socket that only root and the service's group can open (file mode and group, enforced by the kernel).
import { chmodSync, chownSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { dirname } from 'node:path';
import type { Logger } from 'pino';
import { fromCallback, type AnyActorRef, type EventObject } from 'xstate';
import type { AgentBus } from '../../src/cortex/events.js';
import { describeError } from '../../src/errors.js';
import { safetyStatusOf } from './status.js';

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
 */

export interface EstopSocketOptions {
  path: string;
  /** Group name or id allowed besides root; default the process's group. */
  group?: string | number;
}

export interface EstopSocketInput {
  options: EstopSocketOptions | undefined;
  /** The governor: commands are sent to it, answers read from its snapshot. */
  governor: AnyActorRef;
  logger: Logger;
  bus: AgentBus;
  /** Reads the status for STATUS and for the answers; default the governor's snapshot. */
  status?: () => unknown;
}

const MAX_LINE = 1024;
const IDLE_MS = 10_000;

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

/** Resolves when `path` accepts a connection (another agent listens there), false when nothing does. */
function inUse(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => (s.destroy(), resolve(true)));
    s.once('error', () => resolve(false));
  });
}

/** Handles one connection: reads command lines, answers each. */
function serve(conn: Socket, input: EstopSocketInput, status: () => unknown): void {
  conn.setEncoding('utf8');
  conn.setTimeout(IDLE_MS, () => conn.destroy());
  conn.on('error', () => conn.destroy());
  let buf = '';
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
      if (line) conn.write(`${answer(line, input, status)}\n`);
    }
  });
}

function answer(line: string, input: EstopSocketInput, status: () => unknown): string {
  const [word = '', ...rest] = line.split(/\s+/);
  const command = word.toUpperCase();
  const latched = () => (status() as { estop?: unknown }).estop != null;
  if (command === 'ESTOP') {
    input.governor.send({ type: 'safety.estop', source: 'socket', reason: rest.join(' ').slice(0, 200) || 'cortexd estop' });
    return latched() ? 'OK latched' : 'ERR the governor did not latch';
  }
  if (command === 'RELEASE') {
    if (!latched()) return 'ERR no emergency stop is latched';
    input.governor.send({ type: 'safety.release', source: 'socket' });
    return latched() ? 'ERR still latched' : 'OK released';
  }
  if (command === 'STATUS') return `OK ${JSON.stringify(status())}`;
  return `ERR unknown command "${word.slice(0, 40)}" (ESTOP [reason], RELEASE, STATUS)`;
}

/**
 * A child of the governor: listens while the agent runs, removes the socket file when it stops. A
 * stale file left by a killed agent is replaced; a socket another running agent listens on is not
 * touched (reported, and this agent runs without the socket source).
 */
export const estopSocketLogic = fromCallback<EventObject, EstopSocketInput>(({ input }) => {
  const options = input.options;
  if (!options) return;
  const status = input.status ?? (() => safetyStatusOf(input.governor));
  let server: Server | undefined;
  let stopped = false;
  let listening = false;
  const fail = (err: unknown) => {
    const message = `e-stop socket ${options.path} unavailable: ${describeError(err)}`;
    input.logger.error(message);
    input.bus.emit({ type: 'error', at: Date.now(), source: 'safety', message });
  };
  const start = async () => {
    const gid = groupId(options.group);
    const dir = dirname(options.path);
    if (!existsSync(dir)) {
      mkdirSync(dir, { recursive: true, mode: 0o750 });
      chownSync(dir, -1, gid);
      chmodSync(dir, 0o750);
    }
    if (existsSync(options.path)) {
      if (!statSync(options.path).isSocket()) throw new Error('a file that is not a socket is in the way');
      if (await inUse(options.path)) throw new Error('another agent listens on it');
      unlinkSync(options.path);
    }
    if (stopped) return;
    server = createServer((conn) => serve(conn, input, status));
    // Bound under a temporary name, given its group and mode, then renamed: the socket appears complete.
    const tmp = `${options.path}.${process.pid}.tmp`;
    await new Promise<void>((resolve, reject) => {
      server!.once('error', reject);
      server!.listen(tmp, () => {
        server!.off('error', reject);
        resolve();
      });
    });
    try {
      chownSync(tmp, -1, gid);
      chmodSync(tmp, 0o660);
      renameSync(tmp, options.path);
    } catch (err) {
      unlinkSync(tmp);
      throw err;
    }
    listening = true;
    server.on('error', fail);
    input.logger.info(`e-stop socket at ${options.path} (root and group ${gid})`);
    if (stopped) close();
  };
  const close = () => {
    const s = server;
    server = undefined;
    if (!s) return;
    s.close();
    if (listening) {
      try {
        unlinkSync(options.path);
      } catch {
        /* already gone */
      }
    }
  };
  start().catch((err) => {
    close();
    fail(err);
  });
  return () => {
    stopped = true;
    close();
  };
});
