// TEST AND BENCH ONLY: what a running process holds, read from /proc (Linux): memory, open descriptors by kind, threads, child processes.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';

export interface ProcStats {
  rssMb: number;
  /** Open file descriptors by kind: socket, pipe, anon_inode (epoll, eventfd...), dev (/dev/...), file. */
  fds: Record<string, number>;
  fdTotal: number;
  threads: number;
  /** Live child processes, by command name. */
  children: string[];
}

function fdKind(target: string): string {
  if (target.startsWith('socket:')) return 'socket';
  if (target.startsWith('pipe:')) return 'pipe';
  if (target.startsWith('anon_inode:')) return 'anon_inode';
  if (target.startsWith('/dev/')) return 'dev';
  return 'file';
}

/** A snapshot of process `pid`; throws if it is gone. */
export function procStats(pid: number): ProcStats {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? 0);
  const fds: Record<string, number> = {};
  let fdTotal = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    let target = '';
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue; // closed meanwhile
    }
    const kind = fdKind(target);
    fds[kind] = (fds[kind] ?? 0) + 1;
    fdTotal += 1;
  }
  const children: string[] = [];
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let list = '';
    try {
      list = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of list.split(/\s+/).filter(Boolean)) {
      try {
        children.push(readFileSync(`/proc/${child}/comm`, 'utf8').trim());
      } catch {
        // exited meanwhile
      }
    }
  }
  return { rssMb: Math.round(field('VmRSS') / 102.4) / 10, fds, fdTotal, threads: field('Threads'), children };
}

/** Reads one sample of a Prometheus text exposition (labels matched as a substring), or undefined. */
export function metricSample(text: string, name: string, labels = ''): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels && !line.includes(labels)) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}
