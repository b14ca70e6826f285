// `cortexd estop [NAME] [--release|--status]`: latches, releases or reads the emergency stop of running agents through their local sockets.
import type { Command } from 'commander';
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { CortexError } from '../src/errors.js';
import { estopLookupDir, estopSocketPath } from '../src/paths.js';
import { EXIT, errLine, reportError } from './output.js';

export interface EstopOptions {
  release?: boolean;
  status?: boolean;
  reason?: string;
  socket?: string;
  /** Milliseconds to wait for an answer (default 3000). */
  timeoutMs?: number;
}

/** Sends one command line to an e-stop socket and resolves with its one answer line. */
export function estopRequest(path: string, line: string, timeoutMs = 3000): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let buf = '';
    const timer = setTimeout(() => {
      s.destroy();
      reject(new CortexError('estop_timeout', `${path}: no answer within ${timeoutMs} ms`));
    }, timeoutMs);
    s.setEncoding('utf8');
    s.on('connect', () => s.write(`${line}\n`));
    s.on('data', (d: string) => {
      buf += d;
      const nl = buf.indexOf('\n');
      if (nl < 0) return;
      clearTimeout(timer);
      s.end();
      resolve(buf.slice(0, nl));
    });
    s.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const why =
        err.code === 'EACCES'
          ? 'permission denied: only root and members of the service group may use the e-stop socket'
          : err.code === 'ENOENT' || err.code === 'ECONNREFUSED'
            ? 'no agent listens there (is it running?)'
            : err.message;
      reject(new CortexError('estop_socket', `${path}: ${why}`, { cause: err }));
    });
  });
}

/** The sockets to use: the one given, the named agent's, or every agent's in the lookup directory. */
export function estopTargets(name: string | undefined, opts: Pick<EstopOptions, 'socket'>): string[] {
  if (opts.socket) return [opts.socket];
  const dir = estopLookupDir();
  if (name) return [estopSocketPath(dir, name)];
  const found = existsSync(dir) ? readdirSync(dir).filter((f) => /^estop-.+\.sock$/.test(f)) : [];
  if (found.length === 0) throw new CortexError('estop_none', `no agent e-stop socket in ${dir} (set CORTEX_RUNTIME_DIR, or give --socket PATH)`);
  return found.sort().map((f) => join(dir, f));
}

/** The agent a socket belongs to: `estop-<name>.sock` is agent <name>; any other path is shown as it is. */
export function agentOfSocket(path: string): string {
  const m = /(?:^|\/)estop-(.+)\.sock$/.exec(path);
  return m ? `agent ${m[1]}` : path;
}

/** A clock time as a person reads it: `2026-11-25 20:31:07` in local time. */
export function showTime(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())} ${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

/** A STATUS answer with its times (`at`, `*_at`: epoch ms) shown as times; anything else as it came. */
export function readableStatus(answer: string): string {
  if (!answer.startsWith('OK {')) return answer;
  try {
    const status = JSON.parse(answer.slice(3)) as unknown;
    const walk = (v: unknown): unknown => {
      if (Array.isArray(v)) return v.map(walk);
      if (v && typeof v === 'object')
        return Object.fromEntries(
          Object.entries(v).map(([k, x]) => [k, (k === 'at' || k.endsWith('_at')) && typeof x === 'number' && x > 1e12 ? showTime(x) : walk(x)]),
        );
      return v;
    };
    return `OK ${JSON.stringify(walk(status))}`;
  } catch {
    return answer;
  }
}

/**
 * Runs the command against every target, one line per agent. Exit 0 when every agent answered OK;
 * for `--release` of every agent (no name), an agent with nothing latched is said so and does not
 * fail the command: it is 0 when every latched agent was released.
 */
export async function runEstop(
  name: string | undefined,
  opts: EstopOptions,
  out: (line: string) => void = (l) => process.stdout.write(`${l}\n`),
): Promise<number> {
  const line = opts.status ? 'STATUS' : opts.release ? 'RELEASE' : `ESTOP ${(opts.reason ?? 'cortexd estop').replace(/\s+/g, ' ').slice(0, 200)}`;
  const everyAgent = !name && !opts.socket;
  let ok = true;
  for (const path of estopTargets(name, opts)) {
    const who = agentOfSocket(path);
    const where = who === path ? path : `${who} (${path})`;
    try {
      const answer = await estopRequest(path, line, opts.timeoutMs);
      const nothingLatched = answer === 'ERR no emergency stop is latched';
      if (opts.release && everyAgent && nothingLatched) {
        out(`${where}: nothing latched`);
        continue;
      }
      out(`${where}: ${opts.status ? readableStatus(answer) : answer}`);
      if (!answer.startsWith('OK')) ok = false;
    } catch (err) {
      errLine(`cortexd estop: ${who === path ? '' : `${who}: `}${(err as Error).message}`);
      ok = false;
    }
  }
  return ok ? EXIT.ok : EXIT.failure;
}

export function register(program: Command): void {
  program
    .command('estop')
    .description('emergency stop of running agents (latched until --release): stops motion and refuses it; root or the service group only')
    .argument('[name]', 'configuration name of the agent (default: every agent on this machine)')
    .option('--release', 'release the latched emergency stop (a person decides the robot may move again)')
    .option('--status', 'print the safety status (latch, motion, faults) as JSON')
    .option('--reason <text>', 'why, for the journal and the bus (default "cortexd estop")')
    .option('--socket <path>', "the agent's e-stop socket (default <runtime dir>/estop-<name>.sock)")
    .action(async (name: string | undefined, opts: EstopOptions) => {
      try {
        process.exitCode = await runEstop(name, opts);
      } catch (err) {
        process.exitCode = reportError(err);
      }
    });
}
