// Runs the built `cortexd run ... --events` as a real process for tests: typed lines in through a unix socket, JSON events out.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AgentEvent } from '../../src/cortex/events.js';

export const MAIN = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');
export const built = existsSync(MAIN);

export interface AgentProcess {
  child: ChildProcess;
  events: AgentEvent[];
  stderr: () => string;
  /** Resolves with the first event (from the start) matching `pred`, or rejects after `ms`. */
  waitFor<T extends AgentEvent = AgentEvent>(pred: (e: AgentEvent) => boolean, ms?: number, what?: string): Promise<T>;
  /** Resolves with the exit code (or 128 + signal number) of the process. */
  exited: Promise<number>;
  exitedAt: () => number | undefined;
}

/** A temporary directory with a state dir and a socket path. */
export function workDir(): { dir: string; state: string; socket: string; file: (name: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-agent-'));
  return { dir, state: join(dir, 'state'), socket: join(dir, 'in.sock'), file: (n) => join(dir, n) };
}

/** Writes a small script that appends its second argument as a line to the file named by its first (command hooks use it). */
export function recorderScript(dir: string): string {
  const path = join(dir, 'record.mjs');
  writeFileSync(path, "import { appendFileSync } from 'node:fs';\nappendFileSync(process.argv[2], process.argv[3] + '\\n');\n");
  return path;
}

/** `env` overrides the test environment (by default no systemd socket and no metrics endpoint); `main` is the CLI to run (another tree's). */
export function startAgent(configPath: string, state: string, extraArgs: string[] = [], env: Record<string, string> = {}, main: string = MAIN): AgentProcess {
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` before these tests`);
  const child = spawn(process.execPath, [main, 'run', '--config', configPath, '--events', ...extraArgs], {
    env: { ...process.env, CORTEX_STATE_DIR: state, CORTEX_LOG_LEVEL: 'warn', NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const events: AgentEvent[] = [];
  const waiters: Array<{ pred: (e: AgentEvent) => boolean; resolve: (e: AgentEvent) => void }> = [];
  let buf = '';
  let err = '';
  let exitedAt: number | undefined;
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buf += chunk;
    let nl: number;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      const e = JSON.parse(line) as AgentEvent;
      events.push(e);
      for (const w of [...waiters]) if (w.pred(e)) waiters.splice(waiters.indexOf(w), 1), w.resolve(e);
    }
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => (err += c));
  const exited = new Promise<number>((resolve) =>
    child.on('exit', (code, signal) => {
      exitedAt = Date.now();
      resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 1));
    }),
  );
  return {
    child,
    events,
    stderr: () => err,
    exited,
    exitedAt: () => exitedAt,
    waitFor: (pred, ms = 10_000, what = 'event') =>
      new Promise((resolve, reject) => {
        const hit = events.find(pred);
        if (hit) return resolve(hit as never);
        const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; stderr: ${err.slice(-2000)}`)), ms);
        waiters.push({ pred, resolve: (e) => (clearTimeout(timer), resolve(e as never)) });
      }),
  };
}

/** Sends lines to a TextInput socket, retrying until the agent listens. */
export async function typeLines(socketPath: string, lines: string[], ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await new Promise<void>((resolve, reject) => {
        const s = connect(socketPath, () => s.end(lines.map((l) => `${l}\n`).join(''), () => resolve()));
        s.on('error', reject);
      });
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
