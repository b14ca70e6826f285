// Runs OM1 files with the built `cortexd run --om1 FILE --simulate --for N --events`, several at once (one WebSim page at a time): model calls and actions counted.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Om1Run {
  file: string;
  code: number;
  /** Events by type (`model.answer`, `action`, `tick`...). */
  counts: Record<string, number>;
  /** The first lines on stderr (the simulation banner and the translations). */
  head: string[];
  stderrTail: string;
}

/**
 * Runs one file for `seconds` and resolves when the process ended (a hang guard kills it after
 * `seconds` + 60 s). With `untilAnswers`, the run is stopped (SIGTERM, a graceful stop) once the model
 * answered that many times: `seconds` is then the most it may take.
 */
export function runOm1(
  main: string,
  file: string,
  seconds: number,
  untilAnswers?: number,
  stopWhen?: (event: Record<string, unknown>) => boolean,
  om1 = true,
): Promise<Om1Run> {
  const extraArgs: string[] = [];
  const stateDir = mkdtempSync(join(tmpdir(), 'om1-run-'));
  const child = spawn(
    process.execPath,
    [main, 'run', ...(om1 ? ['--om1', file] : ['--config', file]), '--simulate', '--for', `${seconds}s`, '--events', '--fresh', ...extraArgs],
    {
      env: { ...process.env, CORTEX_STATE_DIR: stateDir, CORTEX_LOG_LEVEL: 'warn', NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const counts: Record<string, number> = {};
  let buf = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buf += chunk;
    for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        const e = JSON.parse(line) as { type?: string };
        if (e.type) counts[e.type] = (counts[e.type] ?? 0) + 1;
        if (stopWhen?.(e)) child.kill('SIGTERM');
        if (untilAnswers !== undefined && e.type === 'model.answer' && counts['model.answer'] === untilAnswers) child.kill('SIGTERM');
      } catch {
        // not an event line
      }
    }
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const guard = setTimeout(() => child.kill('SIGKILL'), (seconds + 60) * 1000);
  return new Promise((resolve) => {
    child.on('exit', (code) => {
      clearTimeout(guard);
      resolve({ file, code: code ?? 128, counts, head: stderr.split('\n').slice(0, 3), stderrTail: stderr.slice(-1500) });
    });
  });
}

/** True when the file has a WebSim page (its port is fixed: two at once would collide). */
export function hasWebSim(file: string): boolean {
  return /type:\s*["']WebSim["']/.test(readFileSync(file, 'utf8'));
}

/** Runs files `parallel` at a time, at most one with a WebSim page at once. */
export async function runMany(main: string, files: string[], seconds: number, parallel: number, untilAnswers?: number): Promise<Om1Run[]> {
  const results: Om1Run[] = [];
  const queue = [...files];
  let webSimBusy = false;
  const worker = async () => {
    for (;;) {
      const i = queue.findIndex((f) => !webSimBusy || !hasWebSim(f));
      if (i < 0) {
        if (queue.length === 0) return;
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      const [file] = queue.splice(i, 1) as [string];
      const web = hasWebSim(file);
      if (web) webSimBusy = true;
      results.push(await runOm1(main, file, seconds, untilAnswers));
      if (web) webSimBusy = false;
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return results;
}
