// Runs every bench/*.js with --quick against the build: each completes with its verdict line, and leaves no process it started running.
import t from 'tap';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBuild } from '../helpers/requires.js';
import { until } from '../helpers/wait.js';

const ROOT = join(import.meta.dirname, '..', '..');
const BENCH = join(ROOT, 'bench');

/**
 * Benchmarks the suite does not run, and why (bench/README.md says the same). Every other file of
 * bench/*.js runs, the ones added later included.
 */
const SKIPPED: Record<string, string> = {
  'install.js':
    "even its --quick copies this checkout's node_modules (hundreds of MB) into a production tree and prunes it with npm: a minute of disk on CI's 2 cores, for a figure the suite does not assert",
  'agent-abuse.js':
    "its --quick is websim-flood.js's and fleet-flood.js's quick runs one after the other (the same two library calls), and both of those run here on their own",
};

/** Hang guard of one quick run: a quick run takes seconds; this is the bound past which it hangs. */
const HANG_MS = 120_000;
/** Quick runs that take longer by nature, and their guard: service-abuse's four lock-out attacks each start another user's attacker. */
const HANG_OVERRIDE_MS: Record<string, number> = { 'service-abuse.js': 300_000 };
/** How long a bench's processes may take to go once it exited (they were sent SIGTERM by its clean-up). */
const GONE_MS = 15_000;

requireBuild();
const benches = readdirSync(BENCH)
  .filter((f) => f.endsWith('.js'))
  .sort();
t.setTimeout(benches.length * (HANG_MS + GONE_MS) + Object.values(HANG_OVERRIDE_MS).reduce((a, b) => a + b, 0));

/** Processes still running that this run started: in its process group, or carrying its marker in their environment. */
function leftovers(pgid: number, marker: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      // Fields after the command (which may hold spaces and parentheses): state ppid pgrp ...
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z') continue;
      const mine = Number(pgrp) === pgid || readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(marker);
      if (mine) found.push(`${pid} ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim().slice(0, 160)}`);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

const killAll = (pgid: number, marker: string) => {
  for (const line of leftovers(pgid, marker)) {
    try {
      process.kill(Number(line.split(' ')[0]), 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
};

for (const file of benches) {
  if (SKIPPED[file]) {
    t.test(file, { skip: SKIPPED[file] }, () => undefined);
    continue;
  }
  t.test(`${file} --quick completes with its verdict and leaves nothing running`, async (t) => {
    const state = mkdtempSync(join(tmpdir(), 'cortexd-bench-quick-'));
    t.teardown(() => rmSync(state, { recursive: true, force: true }));
    const markerValue = randomUUID();
    const marker = `CORTEX_BENCH_QUICK_RUN=${markerValue}`;
    // Its own process group: everything it starts is found by the group (and by the marker if it leaves the group).
    const child = spawn(process.execPath, [join(BENCH, file), '--quick'], {
      cwd: ROOT,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, CORTEX_STATE_DIR: state, NOTIFY_SOCKET: '', CORTEX_BENCH_QUICK_RUN: markerValue },
    });
    const pgid = child.pid as number;
    t.teardown(() => killAll(pgid, marker));
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err = (err + c).slice(-3000)));
    const started = Date.now();
    const hangMs = HANG_OVERRIDE_MS[file] ?? HANG_MS;
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; hung: boolean }>((resolve) => {
      const guard = setTimeout(() => {
        killAll(pgid, marker);
        resolve({ code: null, signal: 'SIGKILL', hung: true });
      }, hangMs);
      child.once('exit', (code, signal) => {
        clearTimeout(guard);
        resolve({ code, signal, hung: false });
      });
    });
    t.comment(`${file} --quick: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    t.notOk(exit.hung, `${file} finished within ${hangMs / 1000} s`);
    const last = out.trimEnd().split('\n').at(-1) ?? '';
    t.ok(/within target$/.test(last) || last.includes('MISSED target:'), `its last line is a verdict: ${last.slice(-300)}`, {
      stderr: err.slice(-1500),
    });
    if (!exit.hung) t.equal(exit.signal, null, `${file} exited by itself (code ${exit.code}), not by a signal`);
    // Its clean-up sent SIGTERM to what it started: each must be gone within GONE_MS.
    const left = await until(
      () => `${file}'s processes to end: ${leftovers(pgid, marker).join(' | ')}`,
      () => {
        const now = leftovers(pgid, marker);
        return now.length === 0 ? [] : undefined;
      },
      GONE_MS,
      50,
    ).catch(() => leftovers(pgid, marker));
    t.same(left, [], `no process ${file} started is left running`);
  });
}
