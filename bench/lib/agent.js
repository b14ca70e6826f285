// Runs the built `cortexd run --config FILE --events` as a child process for benchmarks: events in order, waits with a deadline, a clean stop.
import { spawn } from './bench.js';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const MAIN = join(import.meta.dirname, '..', '..', 'dist', 'cli', 'main.js');

/** Starts an agent (`args`: more `run` options); `waitFor(pred, ms)` resolves with the first event matching (since the start). */
export function startAgent(config, stateDir, env = {}, args = []) {
  const child = spawn(process.execPath, [MAIN, 'run', '--config', config, '--events', ...args], {
    env: { ...process.env, CORTEX_STATE_DIR: stateDir, CORTEX_LOG_LEVEL: 'warn', NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const events = [];
  const waiters = [];
  let buf = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => {
    buf += chunk;
    let nl;
    while ((nl = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      if (!line.trim()) continue;
      const e = JSON.parse(line);
      events.push(e);
      for (const w of [...waiters]) if (w.pred(e)) waiters.splice(waiters.indexOf(w), 1), w.resolve(e);
    }
  });
  child.stderr.setEncoding('utf8').on('data', (c) => (stderr = (stderr + c).slice(-4000)));
  const exited = new Promise((r) => child.on('exit', (code, signal) => r(code ?? 128)));
  return {
    child,
    events,
    stderr: () => stderr,
    waitFor(pred, ms, what = 'an event') {
      const hit = events.find(pred);
      if (hit) return Promise.resolve(hit);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}; stderr: ${stderr.slice(-600)}`)), ms);
        waiters.push({ pred, resolve: (e) => (clearTimeout(timer), resolve(e)) });
      });
    },
    async stop() {
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(t);
    },
  };
}

/** A TCP port on 127.0.0.1 that was free a moment ago (for WebSim and metrics of a benchmark's agent). */
export const freePort = () =>
  new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
  });

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : undefined;
};
export const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : undefined;
};
