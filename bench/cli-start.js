// Benchmark: wall time and peak memory of `cortexd check default` and `cortexd --version` against a bare `node -e ''`, same run.
import { finish, quick, spawn } from './lib/bench.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/*
 * Usage: node bench/cli-start.js [--runs N] [--root DIR]
 * `--root` points at another checkout's build (its dist/ and config/), to measure a "before" in the
 * same conditions. Runs are interleaved (bare, version, check, bare, ...) so load on this shared
 * machine hits all three alike; medians are reported. Peak RSS and CPU time (user + system, which
 * waiting for a core does not inflate, so it still compares on a loaded machine) come from separate
 * runs with an exit hook preloaded (`process.resourceUsage()`), so the timed runs carry no extra
 * loader. The verdict is on wall time.
 */
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : fallback;
};
const RUNS = Number(opt('--runs', process.env.BENCH_RUNS ?? (quick ? 1 : 11)));
const root = resolve(opt('--root', join(import.meta.dirname, '..')));
const main = join(root, 'dist', 'cli', 'main.js');
/** Issue 29's targets, above a bare node start measured in the same run. */
const TARGET_MS = 150;
const VERSION_TARGET_MS = 40;

const stateDir = mkdtempSync(join(tmpdir(), 'cortexd-cli-start-'));
const env = { ...process.env, CORTEX_STATE_DIR: stateDir, CORTEX_CONFIG_DIR: join(root, 'config'), NODE_OPTIONS: '' };
for (const k of ['CONFIG', 'OM_API_KEY', 'CORTEX_BASE_URL', 'CORTEX_WS_BASE_URL', 'CORTEX_ASR_WS_URL', 'CORTEX_VLM_WS_URL', 'STATE_DIRECTORY']) delete env[k];

const commands = {
  bare_node: ['-e', ''],
  version: [main, '--version'],
  check_default: [main, 'check', 'default'],
};

/** Peak RSS (KiB, as Linux reports it) and CPU time (µs) written to fd 3 as the process exits. */
const RSS_HOOK = `data:text/javascript,import{writeSync}from"node:fs";process.on("exit",()=>{try{const u=process.resourceUsage();writeSync(3,u.maxRSS+" "+(u.userCPUTime+u.systemCPUTime))}catch{}})`;

/** Runs `node ...argv` once; resolves its wall time in ms (spawn to exit) and, with `rss`, its peak RSS in MiB and CPU time in ms. */
function once(argv, rss = false) {
  return new Promise((resolvePromise, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, rss ? [`--import=${RSS_HOOK}`, ...argv] : argv, {
      env,
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe', ...(rss ? ['pipe'] : [])],
    });
    let out = '';
    let err = '';
    let report = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    if (rss) child.stdio[3].on('data', (d) => (report += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const ms = performance.now() - t0;
      if (code !== 0) return reject(new Error(`node ${argv.join(' ')} exited ${code}: ${(err || out).trim().slice(0, 400)}`));
      const [kib, cpuUs] = report.split(' ').map(Number);
      resolvePromise({ ms, rssMiB: rss ? kib / 1024 : undefined, cpuMs: rss ? cpuUs / 1000 : undefined, out: out.trim() });
    });
  });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const round = (x) => Math.round(x * 10) / 10;

try {
  // One warm-up of each (page cache, compile cache), not counted.
  for (const argv of Object.values(commands)) await once(argv);
  const times = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let i = 0; i < RUNS; i++) for (const [k, argv] of Object.entries(commands)) times[k].push((await once(argv)).ms);
  const rss = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  const cpu = Object.fromEntries(Object.keys(commands).map((k) => [k, []]));
  for (let i = 0; i < RUNS; i++)
    for (const [k, argv] of Object.entries(commands)) {
      const r = await once(argv, true);
      rss[k].push(r.rssMiB);
      cpu[k].push(r.cpuMs);
    }
  const medCpu = Object.fromEntries(Object.entries(cpu).map(([k, v]) => [k, median(v)]));
  const version = (await once(commands.version)).out;

  const med = Object.fromEntries(Object.entries(times).map(([k, v]) => [k, median(v)]));
  const result = {
    root,
    runs: RUNS,
    cortexd_version: version,
    median_ms: Object.fromEntries(Object.entries(med).map(([k, v]) => [k, round(v)])),
    above_bare_node_ms: { version: round(med.version - med.bare_node), check_default: round(med.check_default - med.bare_node) },
    median_cpu_ms: Object.fromEntries(Object.entries(medCpu).map(([k, v]) => [k, round(v)])),
    above_bare_node_cpu_ms: { version: round(medCpu.version - medCpu.bare_node), check_default: round(medCpu.check_default - medCpu.bare_node) },
    max_rss_mib: Object.fromEntries(Object.entries(rss).map(([k, v]) => [k, round(median(v))])),
    all_ms: Object.fromEntries(Object.entries(times).map(([k, v]) => [k, v.map(round)])),
    target: `check default <= ${TARGET_MS} ms and --version <= ${VERSION_TARGET_MS} ms above bare node`,
  };
  console.log(JSON.stringify(result, null, 2));
  const over = result.above_bare_node_ms.check_default;
  const overVersion = result.above_bare_node_ms.version;
  const missed = [
    ...(over > TARGET_MS ? [`check default is ${over} ms above bare node (target ${TARGET_MS} ms)`] : []),
    ...(overVersion > VERSION_TARGET_MS ? [`--version is ${overVersion} ms above bare node (target ${VERSION_TARGET_MS} ms)`] : []),
  ];
  const line =
    `cli-start: check default ${result.median_ms.check_default} ms (+${over} ms over bare node ${result.median_ms.bare_node} ms), ` +
    `--version ${result.median_ms.version} ms (+${result.above_bare_node_ms.version} ms); ` +
    `CPU above bare node: check +${result.above_bare_node_cpu_ms.check_default} ms, --version +${result.above_bare_node_cpu_ms.version} ms; max RSS check ${result.max_rss_mib.check_default} MiB, ` +
    `version ${result.max_rss_mib.version} MiB, bare ${result.max_rss_mib.bare_node} MiB; median of ${RUNS}`;
  console.log(missed.length === 0 ? `${line}; within target` : `${line}; MISSED target: ${missed.join('; ')}`);
} finally {
  rmSync(stateDir, { recursive: true, force: true });
}
await finish(0);
