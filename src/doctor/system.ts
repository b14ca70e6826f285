// Doctor's shared vocabulary (check results, program lookup, bounded subprocesses) and its machine checks: Node, packages, state directory.
import { execFile } from 'node:child_process';
import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findOnPath } from '../which.js';
import { describeError } from '../errors.js';
import { stateDir } from '../paths.js';

export type CheckStatus = 'ok' | 'warn' | 'fail';

/** One line of `cortexd doctor`: what was checked, how it went, and what to do about it. */
export interface CheckResult {
  status: CheckStatus;
  name: string;
  detail: string;
  /** The action that fixes a warn or fail; absent for ok. */
  fix?: string;
}

export const ok = (name: string, detail: string): CheckResult => ({ status: 'ok', name, detail });
export const warn = (name: string, detail: string, fix: string): CheckResult => ({ status: 'warn', name, detail, fix });
export const fail = (name: string, detail: string, fix: string): CheckResult => ({ status: 'fail', name, detail, fix });

/** Full path of an executable found on PATH, or undefined. */
export function onPath(program: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return findOnPath(program, env.PATH ?? '');
}

export interface RunResult {
  /** Exit code; null when the program was missing, killed by the timeout or a signal. */
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Runs a program with a hard timeout and never throws; doctor must finish even when a device hangs. */
export function runProgram(file: string, args: string[], timeoutMs: number, env: NodeJS.ProcessEnv = process.env): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(file, args, { timeout: timeoutMs, killSignal: 'SIGKILL', env, encoding: 'utf8', maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      const e = err as (NodeJS.ErrnoException & { code?: number | string; killed?: boolean }) | null;
      const code = e ? (typeof e.code === 'number' ? e.code : null) : 0;
      resolve({
        code,
        stdout: String(stdout ?? ''),
        stderr: String(stderr ?? '') || (e && code === null ? describeError(e) : ''),
        timedOut: Boolean(e?.killed),
      });
    });
  });
}

/** Node 20 is the oldest release cortexd is built and tested for. */
export function checkNode(version: string = process.versions.node): CheckResult {
  const major = Number(version.split('.')[0]);
  if (major >= 20) return ok('node', `Node.js ${version}`);
  return fail('node', `Node.js ${version} is too old`, 'install Node.js 20 or newer (https://nodejs.org or your distribution)');
}

/**
 * Debian packages of DESIGN.md's setup list, with what each is for. A missing package is a warn,
 * not a fail: the feature that needs it (recorder, player, camera) has its own check that fails
 * when the configuration actually uses it.
 */
export const SYSTEM_PACKAGES: Record<string, string> = {
  'libopencv-dev': 'OpenCV for the camera and local vision',
  'opencv-data': 'face detection models',
  sox: 'microphone recording (sox/rec)',
  'alsa-utils': 'arecord and aplay',
  socat: 'serial test peers',
  'espeak-ng': 'offline speech synthesis',
  ffmpeg: 'MP3 speech and ffplay',
  pocketsphinx: 'offline speech recognition',
  'pocketsphinx-en-us': 'English recognition model',
  'gpsd-clients': 'GPS test feeds (gpsfake)',
  chromium: 'browser tests and WebSim screenshots',
};

export async function checkPackages(packages: string[] = Object.keys(SYSTEM_PACKAGES), env: NodeJS.ProcessEnv = process.env): Promise<CheckResult> {
  const name = 'system packages';
  const dpkg = onPath('dpkg-query', env);
  if (!dpkg) return warn(name, 'dpkg-query not found: cannot check packages on this system', `install the equivalents of: ${packages.join(' ')}`);
  const r = await runProgram(dpkg, ['-W', '-f=${Package} ${Status}\\n', ...packages], 10_000, env);
  const installed = new Set(
    r.stdout
      .split('\n')
      .filter((l) => / install ok installed$/.test(l))
      .map((l) => l.split(' ')[0]),
  );
  const missing = packages.filter((p) => !installed.has(p));
  if (missing.length === 0) return ok(name, `${packages.length} packages installed`);
  return warn(
    name,
    `missing: ${missing.map((p) => (SYSTEM_PACKAGES[p] ? `${p} (${SYSTEM_PACKAGES[p]})` : p)).join(', ')}`,
    `sudo apt-get install ${missing.join(' ')}`,
  );
}

/** Files of the state directory that hold secrets or account data (the local service's database and JWT secret). */
export const PRIVATE_STATE_FILES = ['cloud.sqlite', 'cloud.sqlite-wal', 'cloud.sqlite-shm', 'cloud.sqlite-journal', 'cloud-jwt.secret'];

/**
 * What in the state directory is readable by others: the directory wider than 0700, or a private
 * file (PRIVATE_STATE_FILES) wider than 0600. Each entry reads `cloud.sqlite is 0644`.
 */
export function statePermissionProblems(dir: string): string[] {
  const problems: string[] = [];
  const modeOf = (path: string): number | undefined => {
    try {
      return statSync(path).mode & 0o777;
    } catch {
      return undefined;
    }
  };
  const octal = (m: number): string => `0${m.toString(8).padStart(3, '0')}`;
  const dirMode = modeOf(dir);
  if (dirMode !== undefined && (dirMode & 0o077) !== 0) problems.push(`${dir} is ${octal(dirMode)}`);
  for (const f of PRIVATE_STATE_FILES) {
    const m = modeOf(join(dir, f));
    if (m !== undefined && (m & 0o177) !== 0) problems.push(`${f} is ${octal(m)}`);
  }
  return problems;
}

/**
 * Creates the state directory if needed and proves a file can be written and renamed there (atomic
 * saves need both); warns when the directory is wider than 0700 or the service's database, its
 * -wal/-shm or the JWT secret are wider than 0600 (users, balances, the ledger and key hashes).
 */
export function checkStateDir(dir: string = stateDir()): CheckResult {
  const name = 'state directory';
  const probe = join(dir, `.doctor-${process.pid}`);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(`${probe}.tmp`, 'ok');
    renameSync(`${probe}.tmp`, probe);
    rmSync(probe);
    const wide = statePermissionProblems(dir);
    if (wide.length > 0) {
      const files = PRIVATE_STATE_FILES.map((f) => join(dir, f)).join(' ');
      return warn(name, `${dir} is writable, but readable by others: ${wide.join(', ')}`, `chmod 700 ${dir}; chmod 600 ${files} (missing files are fine)`);
    }
    return ok(name, `${dir} is writable`);
  } catch (err) {
    try {
      rmSync(`${probe}.tmp`, { force: true });
    } catch {
      // the directory itself is unusable: nothing was written
    }
    return fail(
      name,
      `${dir} is not writable: ${describeError(err)}`,
      'as a service, StateDirectory=cortexd creates /var/lib/cortexd for the cortexd user; otherwise set CORTEX_STATE_DIR to a writable directory',
    );
  }
}
