// What a forked worker process needs from its parent: the Node flags it inherits, and its resident memory read from /proc.
import { readFileSync } from 'node:fs';

/** Resident memory of `pid` in bytes (Linux /proc), 0 when unknown. */
export function residentBytes(pid: number | undefined): number {
  if (!pid) return 0;
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * The Node flags a worker inherits: module loaders and their settings only (`--import`, `--loader`,
 * `--require`, `--conditions`, source maps), so the test runner's TypeScript loader still works.
 * Everything else is dropped: `-e`/`--eval` and `--input-type` (a parent started from a script string
 * would run that script again instead of the worker), `--inspect` (its port is taken), and the rest.
 */
export function workerExecArgv(parent: readonly string[] = process.execArgv): string[] {
  const withValue = new Set(['--import', '--loader', '--experimental-loader', '--require', '-r', '--conditions', '-C']);
  const out: string[] = [];
  for (let i = 0; i < parent.length; i++) {
    const a = parent[i]!;
    const name = a.split('=')[0]!;
    if (withValue.has(name)) {
      if (a.includes('=')) out.push(a);
      else if (i + 1 < parent.length) out.push(a, parent[++i]!);
    } else if (a === '--enable-source-maps' || a === '--no-warnings') out.push(a);
  }
  return out;
}

/** The environment of a worker that loads OpenCV: the binding's memory tracker off (it crashes the process, src/vision/opencv.ts), OpenCV's log quiet unless asked. */
export function opencvWorkerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, OPENCV4NODEJS_DISABLE_EXTERNAL_MEM_TRACKING: '1', OPENCV_LOG_LEVEL: env.OPENCV_LOG_LEVEL ?? 'ERROR' };
}
