// Runs OM1's reference configurations through `check --om1 --simulate` and `run --om1 --simulate`: prints how many pass and run with model calls, and what each other file still misses.
// node bench/om1-corpus.js [--seconds 20] [--parallel 3]   (30 s runs: --seconds 30)
import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { finish, quick } from './lib/bench.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '20' }, parallel: { type: 'string', default: '3' }, quick: { type: 'boolean' } },
});
const seconds = Number(values.seconds);
const parallel = Number(values.parallel);
const root = join(import.meta.dirname, '..');
const MAIN = join(root, 'dist', 'src', 'cli', 'main.js');
const CORPUS = resolve(root, '..', 'shared', 'reference', 'om1-configs');
/** `--quick` runs the first QUICK_FILES passing files, each until its first model answer (`--seconds` the most), and wants each of them to run. */
const QUICK_FILES = 1;
const TARGET = quick ? QUICK_FILES : 24;

const { loadAs } = await import('../dist/src/compat/om1/load.js');
const { ConfigError } = await import('../dist/src/errors.js');
const { runMany, runOm1 } = await import('../dist/test/support/om1-runs.js');

const files = readdirSync(CORPUS)
  .filter((f) => f.endsWith('.json5'))
  .sort();
const checked = [];
for (const f of files) {
  try {
    await loadAs({ file: join(CORPUS, f) }, { om1: true, simulate: true, env: {} });
    checked.push({ file: f, ok: true });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    checked.push({ file: f, ok: false, missing: err.issues.map((i) => i.message) });
  }
}
const passing = checked
  .filter((c) => c.ok)
  .map((c) => join(CORPUS, c.file))
  .slice(0, quick ? QUICK_FILES : undefined);
// Baseline in the same run: the project's own offline configuration, simulated the same way.
const started = Date.now();
const [runs, baseline] = await Promise.all([
  runMany(MAIN, passing, seconds, parallel, quick ? 1 : undefined),
  runOm1(MAIN, join(root, 'config', 'default.json5'), seconds, quick ? 1 : undefined, undefined, false).catch((e) => ({
    code: -1,
    counts: {},
    error: String(e),
  })),
]);
const ran = runs.filter((r) => r.code === 0 && (r.counts['model.answer'] ?? 0) > 0);
const failedRuns = runs.filter((r) => !ran.includes(r));
const report = {
  files: files.length,
  seconds,
  pass_check: passing.length,
  ran_with_model_calls: ran.length,
  wall_ms: Date.now() - started,
  baseline_default_json5: { code: baseline.code, model_answers: baseline.counts?.['model.answer'] ?? 0 },
  runs: runs.map((r) => ({
    file: r.file.split('/').pop(),
    code: r.code,
    model_answers: r.counts['model.answer'] ?? 0,
    actions: r.counts.action ?? 0,
    ticks: r.counts.tick ?? 0,
  })),
  failed_runs: failedRuns.map((r) => ({ file: r.file.split('/').pop(), code: r.code, stderr: r.stderrTail.slice(-400) })),
  missing: Object.fromEntries(checked.filter((c) => !c.ok).map((c) => [c.file, c.missing])),
};
console.log(JSON.stringify(report, null, 2));
const still = Object.keys(report.missing);
console.log(
  `om1 corpus: ${ran.length}/${files.length} pass check --om1 --simulate and ran ${seconds} s with model calls (baseline default.json5: ${report.baseline_default_json5.model_answers} model answers); still missing: ${still.join(', ')}; ${ran.length >= TARGET ? 'within target' : `MISSED target: ${TARGET} files (${ran.length})`}`,
);
await finish(0);
