// Benchmark (takes minutes: the OpenCV variant compiles the bindings, about 5 min on 2 cores): set-up time, node_modules and production-tree size on fresh clones, with and without OpenCV.
//
// Usage: node bench/install.js [--no-opencv-only] [--baseline REV] [--log FILE]
//
// Each variant clones this repository's HEAD into a temporary directory, times
// `bash scripts/setup.sh --no-run [--no-opencv]`, measures node_modules, then runs
// `systemd/install.sh --prefix` into a temporary root and measures the tree it lays down in opt/cortexd.
// The baseline is issue 19's figures of the set-up before this change, measured on a fresh machine
// (7 min 42 s, node_modules 341 MB, installed 341 MB); `--baseline REV` measures that commit's
// set-up and install.sh in the same run instead (another OpenCV build, about 8 more minutes).
// Sizes are `du -sm` (MiB on disk). Needs root or sudo only if Debian packages are missing.
// `--quick` (needs `npm run build`): no clone and no set-up; `systemd/install.sh --prefix` of this checkout, the production tree's size.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finish, onCleanup, quick, verdict } from './lib/bench.js';

const args = process.argv.slice(2);
const opt = (name) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const withOpenCv = !args.includes('--no-opencv-only');
const baselineRev = opt('--baseline');
const repo = join(import.meta.dirname, '..');
const tmp = mkdtempSync(join(tmpdir(), 'cortexd-bench-install-'));
const logFile = opt('--log') ?? join(tmp, 'bench.log');
const log = openSync(logFile, 'a');
onCleanup(() => rmSync(tmp, { recursive: true, force: true }));

/** Issue 19: `bash scripts/setup.sh` and systemd/install.sh before this change, on a fresh machine. */
const REFERENCE = { source: 'issue 19 (before this change, fresh machine)', setup_s: 462, node_modules_mb: 341, production_mb: 341 };
const TARGETS = { production_mb: 120, setup_no_opencv_s: 180 };

const duMb = (path) => Number(execFileSync('du', ['-sm', path], { encoding: 'utf8' }).split('\t')[0]);
const timeBin = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;

/** Runs a command with its output in the log; seconds and the largest process's peak RSS (GNU time). */
function timed(cmd, cmdArgs, cwd) {
  const rss = join(tmp, 'rss');
  const argv = timeBin ? ['-o', rss, '-f', '%M', cmd, ...cmdArgs] : cmdArgs;
  const env = { ...process.env, NODE_OPTIONS: '' };
  for (const k of ['JOBS', 'CORTEX_NO_OPENCV', 'CORTEX_SETUP_TESTS', 'CONFIG']) delete env[k];
  // The clone's `cortexd` link goes beside it, not into the machine's /usr/local/bin.
  env.CORTEX_BIN_DIR = join(tmp, 'bin');
  const t0 = performance.now();
  const r = spawnSync(timeBin ?? cmd, argv, { cwd, env, stdio: ['ignore', log, log] });
  const seconds = (performance.now() - t0) / 1000;
  if (r.status !== 0) throw new Error(`${cmd} ${cmdArgs.join(' ')} failed in ${cwd} (exit ${r.status}); see ${logFile}`);
  const peakKb = timeBin ? Number(readFileSync(rss, 'utf8').trim().split('\n').pop()) : NaN;
  return { seconds, peak_rss_mb: Number.isFinite(peakKb) ? Math.round(peakKb / 1024) : null };
}

function variant(name, setupArgs, rev) {
  const dir = join(tmp, name);
  execFileSync('git', ['clone', '--quiet', repo, dir]);
  if (rev) execFileSync('git', ['checkout', '--quiet', rev], { cwd: dir });
  process.stderr.write(`bench: ${name}: set-up ${setupArgs.join(' ')} in ${dir} (log: ${logFile})\n`);
  const setup = timed('bash', ['scripts/setup.sh', '--no-run', ...setupArgs], dir);
  const root = join(tmp, `${name}-root`);
  const install = timed('bash', ['systemd/install.sh', '--prefix', root, '--node', process.execPath], dir);
  const opencvBuilt = existsSync(join(dir, 'node_modules/@u4/opencv4nodejs/build/Release/opencv4nodejs.node'));
  const result = {
    setup_s: +setup.seconds.toFixed(1),
    setup_peak_process_rss_mb: setup.peak_rss_mb,
    node_modules_mb: duMb(join(dir, 'node_modules')),
    opencv_compiled: opencvBuilt,
    install_s: +install.seconds.toFixed(1),
    production_mb: duMb(join(root, 'opt/cortexd')),
    production_node_modules_mb: duMb(join(root, 'opt/cortexd/node_modules')),
  };
  rmSync(dir, { recursive: true, force: true });
  rmSync(root, { recursive: true, force: true });
  return result;
}

if (quick) {
  const root = join(tmp, 'quick-root');
  const install = timed('bash', ['systemd/install.sh', '--prefix', root, '--node', process.execPath], repo);
  const quickResult = { install_s: +install.seconds.toFixed(1), production_mb: duMb(join(root, 'opt/cortexd')), targets: TARGETS };
  console.log(JSON.stringify(quickResult, null, 2));
  verdict(
    `install (quick: this checkout's install.sh only): ${quickResult.install_s} s, production tree ${quickResult.production_mb} MB`,
    quickResult.production_mb < TARGETS.production_mb ? [] : [`production tree ${quickResult.production_mb} MB >= ${TARGETS.production_mb} MB`],
  );
  await finish(0);
}

const result = { reference: REFERENCE, targets: TARGETS, no_opencv: variant('no-opencv', ['--no-opencv']) };
if (withOpenCv) result.opencv = variant('opencv', []);
if (baselineRev) result.baseline = { rev: baselineRev, ...variant('baseline', [], baselineRev) };
console.log(JSON.stringify(result, null, 2));

const mmss = (s) => `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
const before = result.baseline ?? REFERENCE;
const missed = [];
if (result.no_opencv.setup_s >= TARGETS.setup_no_opencv_s) missed.push(`set-up without OpenCV ${result.no_opencv.setup_s} s >= ${TARGETS.setup_no_opencv_s} s`);
for (const v of ['no_opencv', 'opencv']) {
  if (result[v] && result[v].production_mb >= TARGETS.production_mb)
    missed.push(`production tree (${v}) ${result[v].production_mb} MB >= ${TARGETS.production_mb} MB`);
}
if (result.opencv && !result.opencv.opencv_compiled) missed.push('OpenCV was not compiled by the full set-up');
const withText = result.opencv
  ? `, ${mmss(result.opencv.setup_s)} with (node_modules ${result.opencv.node_modules_mb} MB, production tree ${result.opencv.production_mb} MB)`
  : '';
console.log(
  `install: set-up ${mmss(result.no_opencv.setup_s)} without OpenCV (node_modules ${result.no_opencv.node_modules_mb} MB, production tree ${result.no_opencv.production_mb} MB)${withText}; ` +
    `before: ${mmss(before.setup_s)}, ${before.node_modules_mb} MB, ${before.production_mb} MB — ${missed.length ? `MISSED target: ${missed.join('; ')}` : 'within target'}`,
);
await finish(0);
