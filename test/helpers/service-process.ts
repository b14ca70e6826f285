// Abuse tests' view of a service in its own process: start it, read its memory from /proc, and probe it from a well-behaved key.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ServiceOptions } from '../../src/service/index.js';
import { tsLoaderArgs } from './ts-loader.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/service/abuse-service.ts', import.meta.url));

export interface ServiceProcess {
  pid: number;
  url: string;
  wsUrl: string;
  asrWsUrl: string;
  vlmWsUrl: string;
  keys: Record<string, string>;
  jwts: Record<string, string>;
  child: ChildProcess;
  stop(): Promise<void>;
}

export interface ServiceSpec {
  limits?: ServiceOptions['limits'];
  backends?: ServiceOptions['backends'];
  users?: Record<string, { plan?: string; prepaid?: number; monthlyUnused?: number }>;
}

/** Starts test/fixtures/service/abuse-service.ts; resolves once it printed its addresses and keys. */
export async function startServiceProcess(spec: ServiceSpec = {}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...tsLoaderArgs, FIXTURE, JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  let out = '';
  const info = await new Promise<Omit<ServiceProcess, 'pid' | 'child' | 'stop'>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service process printed nothing in 60 s: ${out}`)), 60_000);
    child.once('exit', (code) => reject(new Error(`service process exited with ${code}: ${out}`)));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const line = out.split('\n').find((l) => l.startsWith('{'));
      if (line && out.includes('\n')) {
        clearTimeout(timer);
        resolve(JSON.parse(line));
      }
    });
  });
  return {
    ...info,
    pid: child.pid!,
    child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

/** A /proc/<pid>/status field in kB (VmRSS, VmHWM), 0 when the process is gone. */
function statusKb(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Every descendant of `pid` (children of all its threads, recursively). */
export function descendants(pid: number): number[] {
  const out: number[] = [];
  const walk = (p: number): void => {
    let kids: number[] = [];
    try {
      kids = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      kids = [];
    }
    for (const k of kids) {
      out.push(k);
      walk(k);
    }
  };
  walk(pid);
  return out;
}

/** Names (comm) of the descendants of `pid`. */
export function descendantNames(pid: number): string[] {
  return descendants(pid).map((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').trim();
    } catch {
      return '';
    }
  });
}

/**
 * Memory of the service while something runs: the service's own peak (VmHWM, reset first through
 * /proc/<pid>/clear_refs) and the highest sampled sum of service + descendants' RSS, in MB.
 */
export async function memoryDuring<T>(
  pid: number,
  work: () => Promise<T>,
  sampleMs = 25,
): Promise<{ result: T; peakMb: number; totalPeakMb: number; idleMb: number }> {
  const idleMb = statusKb(pid, 'VmRSS') / 1024;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
  } catch {
    // Older kernels: VmHWM then counts from start, which only makes the bound stricter.
  }
  let totalPeak = 0;
  const sample = (): void => {
    const total = [pid, ...descendants(pid)].reduce((n, p) => n + statusKb(p, 'VmRSS'), 0);
    totalPeak = Math.max(totalPeak, total);
  };
  const timer = setInterval(sample, sampleMs);
  try {
    const result = await work();
    sample();
    return { result, peakMb: statusKb(pid, 'VmHWM') / 1024, totalPeakMb: totalPeak / 1024, idleMb };
  } finally {
    clearInterval(timer);
  }
}

/** One well-behaved request: a short chat to the offline model with the probe's own key. Resolves with its latency in ms. */
export async function probeOnce(url: string, key: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/core/provider_a/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'gen-5-nano', messages: [{ role: 'user', content: 'Voice: hello robot' }] }),
    signal: AbortSignal.timeout(30_000),
  });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`probe answered ${res.status}`);
  return performance.now() - t0;
}

/**
 * Runs `attack` while probing the service with `key`, one request at a time, a new one `everyMs`
 * after the previous answer (a well-behaved client, not a second load); resolves with the attack's
 * result and every probe latency, at least `minProbes` of them.
 */
export async function probeDuring<T>(
  url: string,
  key: string,
  attack: () => Promise<T>,
  opts: { minProbes?: number; everyMs?: number } = {},
): Promise<{ result: T; latencies: number[] }> {
  let done = false;
  const latencies: number[] = [];
  const running = attack().finally(() => (done = true));
  while (!done || latencies.length < (opts.minProbes ?? 3)) {
    latencies.push(await probeOnce(url, key));
    await new Promise((r) => setTimeout(r, opts.everyMs ?? 20));
  }
  return { result: await running, latencies };
}

export const max = (xs: number[]): number => xs.reduce((a, b) => Math.max(a, b), 0);
