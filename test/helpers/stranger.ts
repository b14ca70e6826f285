// Another local user for tests: runs a dependency-free script as that user (setpriv, as root) and talks to it over its stdio.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A second local user: `nobody`, which every Debian system has (the tests and benches run as root and
 * become it with setpriv); undefined when not root or without setpriv. No user is created: the test
 * command changes nothing on the machine.
 */
export function strangerUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0 || spawnSync('sh', ['-c', 'command -v setpriv']).status !== 0) return undefined;
  const id = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  if (id.status !== 0) return undefined;
  return { uid: Number(id.stdout.trim()), gid: Number(spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).stdout.trim()) };
}

export interface Stranger {
  child: ChildProcess;
  /** Resolves with the first JSON line the script prints whose `type` is `type`; rejects after `ms` or when the script exits first. */
  line<T = Record<string, unknown>>(type: string, ms?: number): Promise<T>;
  /** Closes its stdin (the scripts here stop on that) and waits for the exit code. */
  stop(): Promise<number | null>;
}

/**
 * Runs `script` (an ES module using only node: built-ins) as `user` with `args`, from a copy in a
 * world-readable temp directory (the checkout may be under a 0700 home) and with a clean
 * environment (the test runner's loader options are for this process only).
 */
export function runAsStranger(user: { uid: number; gid: number }, script: string, args: string[]): Stranger {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-stranger-'));
  chmodSync(dir, 0o755);
  const file = join(dir, 'stranger.mjs');
  writeFileSync(file, script, { mode: 0o644 });
  // `env -u NODE_OPTIONS`: tap's process tracker puts its loader (a file of the checkout, which the other
  // user may not read) back into every child's NODE_OPTIONS, whatever `env` this call passes.
  const child = spawn(
    'setpriv',
    [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', 'env', '-u', 'NODE_OPTIONS', process.execPath, file, ...args],
    {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir },
      stdio: ['pipe', 'pipe', 'pipe'],
    },
  );
  const lines: Record<string, unknown>[] = [];
  const waiters: Array<() => void> = [];
  let stderr = '';
  let buf = '';
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (stderr = (stderr + c).slice(-4000)));
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    buf += c;
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      try {
        lines.push(JSON.parse(buf.slice(0, nl)) as Record<string, unknown>);
      } catch {
        /* not a report line */
      }
      buf = buf.slice(nl + 1);
      nl = buf.indexOf('\n');
    }
    for (const w of waiters.splice(0)) w();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => (resolve(code), waiters.splice(0).forEach((w) => w()))));
  const line = <T>(type: string, ms = 60_000) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the other user's script printed no ${type} line in ${ms} ms: ${stderr.slice(-1000)}`)), ms);
      const check = () => {
        const found = lines.find((l) => l.type === type);
        if (found) return clearTimeout(timer), resolve(found as T);
        if (child.exitCode !== null) return clearTimeout(timer), reject(new Error(`the other user's script exited ${child.exitCode}: ${stderr.slice(-1000)}`));
        waiters.push(check);
      };
      check();
    });
  const stop = async () => {
    child.stdin!.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    const code = await exited;
    clearTimeout(timer);
    rmSync(dir, { recursive: true, force: true });
    return code;
  };
  return { child, line, stop };
}
