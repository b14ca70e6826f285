// Runs the built `cortexd` under a real pseudo-terminal (util-linux `script`), as a person at a terminal meets it: keys in, the screen's bytes out.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { MAIN } from './agent-process.js';

/** True when util-linux `script` is installed (it makes the pseudo-terminal). */
export const hasScript = spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout?.includes('util-linux') ?? false;

export interface PtyRun {
  child: ChildProcess;
  /** Everything the terminal received so far, as bytes decoded as UTF-8 (escape sequences included). */
  screen(): string;
  /** Resolves with the screen once `pattern` appears in what arrived after `from` (an offset in `screen()`); rejects after `ms`. */
  waitFor(pattern: RegExp, ms?: number, from?: number): Promise<string>;
  /** Types `text` at the terminal (use `\r` for Enter, `\x03` for Ctrl-C, `\x04` for Ctrl-D). */
  type(text: string): void;
  /** The exit code `script` reports (the command's), once it ended. */
  exited: Promise<number>;
}

const shellQuote = (s: string) => (/^[\w./=:-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

/**
 * `cortexd ARGS` in a pseudo-terminal of 160 columns, so stdout and stderr are TTYs as on a
 * person's terminal. `env` is added to the test's environment (no systemd socket, no metrics port).
 */
export function runInPty(args: string[], env: Record<string, string | undefined> = {}): PtyRun {
  const command = `stty cols 160 rows 50 2>/dev/null; exec ${[process.execPath, MAIN, ...args].map(shellQuote).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    env: { ...process.env, NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '', TERM: 'xterm-256color', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: Array<() => void> = [];
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    for (const w of [...waiters]) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<number>((resolve) => child.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : 1))));
  return {
    child,
    screen: () => out,
    type: (text) => void child.stdin!.write(text),
    exited,
    waitFor: (pattern, ms = 20_000, from = 0) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!pattern.test(out.slice(from))) return false;
          clearTimeout(timer);
          waiters.splice(waiters.indexOf(check), 1);
          resolve(out);
          return true;
        };
        const timer = setTimeout(() => {
          waiters.splice(waiters.indexOf(check), 1);
          reject(new Error(`the terminal did not show ${pattern} within ${ms} ms; it shows:\n${out.slice(-3000)}`));
        }, ms);
        waiters.push(check);
        check();
      }),
  };
}

/** The screen as text a person reads: colour codes (which the terminal interprets) left out, carriage returns dropped. */
// eslint-disable-next-line no-control-regex
export const visible = (screen: string): string => screen.replace(/\x1b\[[0-9;]*m/g, '').replace(/\r/g, '');
