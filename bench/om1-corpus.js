// Runs OM1's configurations, per upstream set, through `check --om1` and `run --om1 --simulate`: how many pass and run with model calls, and what each other file still misses.
// node bench/om1-corpus.js [--seconds 20] [--parallel 3] [--quick]   (--quick: every check, then 2 files run 6 s)
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { finish } from './lib/bench.js';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '20' }, parallel: { type: 'string', default: '3' }, quick: { type: 'boolean', default: false } },
});
const quick = values.quick;
const seconds = quick ? 6 : Number(values.seconds);
const parallel = Number(values.parallel);
const root = join(import.meta.dirname, '..');
const MAIN = join(root, 'dist', 'cli', 'main.js');
/** The target: of the files that do not only talk to third-party web services, this share runs. */
const TARGET_SHARE = 0.9;

/** The sets, by upstream date (test/fixtures/om1/README.md names each file's commit). */
const SETS = [
  { set: '2025-08', dir: join(root, 'test', 'fixtures', 'om1', '2025-08') },
  { set: 'reference', dir: resolve(root, '..', 'shared', 'reference', 'om1-configs') },
  { set: '2026', dir: join(root, 'test', 'fixtures', 'om1', '2026') },
  { set: 'v1.1', dir: join(root, 'test', 'fixtures', 'om1', 'v1.1') },
].filter((s) => existsSync(s.dir));

const { loadAs } = await import('../dist/src/compat/om1/load.js');
const { ConfigError } = await import('../dist/src/errors.js');
const { runMany, runOm1 } = await import('../dist/test/support/om1-runs.js');

/** `check --om1` (real devices) and `check --om1 --simulate` of one file: ok, or its problems. */
async function check(file, simulate) {
  try {
    await loadAs({ file }, { om1: true, simulate, env: {} });
    return { ok: true, problems: [] };
  } catch (err) {
    if (!(err instanceof ConfigError)) return { ok: false, problems: [`crash: ${String(err)}`] };
    return { ok: false, problems: err.issues.map((i) => `${i.path ? `${i.path}: ` : ''}${i.message}`) };
  }
}

const checked = [];
for (const { set, dir } of SETS) {
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith('.json5'))
    .sort()) {
    const file = join(dir, f);
    const real = await check(file, false);
    const sim = await check(file, true);
    // Web-only: every problem under --simulate is a third-party web service (unsupported on purpose).
    const webOnly = !sim.ok && sim.problems.every((p) => /unsupported \(third-party web service\)/.test(p));
    checked.push({ set, file, name: f, real: real.ok, simulate: sim.ok, webOnly, problems: sim.problems });
  }
}

const toRun = checked.filter((c) => c.simulate);
const picked = quick ? toRun.filter((c) => c.set === 'v1.1' || c.set === '2026').slice(0, 2) : toRun;
const started = Date.now();
// Baseline in the same run: the project's own offline configuration, simulated the same way.
const [runs, baseline] = await Promise.all([
  runMany(
    MAIN,
    picked.map((c) => c.file),
    seconds,
    parallel,
  ),
  runOm1(MAIN, join(root, 'config', 'default.json5'), seconds, undefined, undefined, false).catch((e) => ({ code: -1, counts: {}, error: String(e) })),
]);
const ranFile = new Set(runs.filter((r) => r.code === 0 && (r.counts['model.answer'] ?? 0) > 0).map((r) => r.file));

const perSet = {};
for (const { set } of SETS) {
  const files = checked.filter((c) => c.set === set);
  const rest = files.filter((c) => !c.webOnly);
  const ran = files.filter((c) => ranFile.has(c.file));
  perSet[set] = {
    files: files.length,
    pass_check_om1: files.filter((c) => c.real).length,
    pass_check_om1_simulate: files.filter((c) => c.simulate).length,
    ran_with_model_answers: quick ? `${ran.length} of ${files.filter((c) => picked.includes(c)).length} run (--quick)` : ran.length,
    web_services_only: files.filter((c) => c.webOnly).map((c) => c.name),
    share_of_the_rest_passing: rest.length ? Number((files.filter((c) => c.simulate && !c.webOnly).length / rest.length).toFixed(3)) : 1,
  };
}
const rest = checked.filter((c) => !c.webOnly);
const passingRest = rest.filter((c) => c.simulate).length;
const total = {
  files: checked.length,
  pass_check_om1: checked.filter((c) => c.real).length,
  pass_check_om1_simulate: checked.filter((c) => c.simulate).length,
  ran_with_model_answers: ranFile.size,
  runs_tried: picked.length,
  web_services_only: checked.filter((c) => c.webOnly).length,
  share_of_the_rest_passing: Number((passingRest / rest.length).toFixed(3)),
};
/** What a problem line names: the plugin, the action/connector, the function hook or the file's key. */
function nameOf(problem) {
  const hook = /function hook (\S+) is OM1's/.exec(problem);
  if (hook) return `function hook ${hook[1]}`;
  const parts = problem.replace(/^(not carried out by cortexd|unsupported \(third-party web service\)|refused): /, '').split(': ');
  // `PATH: NAME {options}: why`, or `KEY: why` for a file's own key.
  const named = /[[.]/.test(parts[0]) && parts.length > 1 ? parts[1] : parts[0];
  return named.split(' ')[0];
}

/** What is still missing, counted by what it names (the plugin or key), then per file. */
const tally = {};
for (const c of checked.filter((x) => !x.simulate && !x.webOnly)) {
  for (const p of c.problems) tally[nameOf(p)] = (tally[nameOf(p)] ?? 0) + 1;
}
const report = {
  seconds,
  quick,
  wall_ms: Date.now() - started,
  baseline_default_json5: { code: baseline.code, model_answers: baseline.counts?.['model.answer'] ?? 0 },
  total,
  per_set: perSet,
  still_missing_by_name: Object.fromEntries(Object.entries(tally).sort((a, b) => b[1] - a[1])),
  missing: Object.fromEntries(checked.filter((c) => !c.simulate).map((c) => [`${c.set}/${c.name}`, c.problems])),
  failed_runs: runs
    .filter((r) => !ranFile.has(r.file))
    .map((r) => ({ file: r.file.split('/').slice(-2).join('/'), code: r.code, stderr: r.stderrTail.slice(-400) })),
};
console.log(JSON.stringify(report, null, 2));
const runsOk = ranFile.size === picked.length;
const met = total.share_of_the_rest_passing >= TARGET_SHARE && runsOk;
console.log(
  `om1 corpus: ${total.pass_check_om1_simulate}/${total.files} pass check --om1 --simulate (${total.pass_check_om1} with real devices), ${ranFile.size}/${picked.length} ran ${seconds} s with model answers (baseline default.json5: ${report.baseline_default_json5.model_answers} answers); ${total.web_services_only} only talk to web services; ${Math.round(total.share_of_the_rest_passing * 100)} % of the rest pass; ${met ? 'within target' : `MISSED target: ${TARGET_SHARE * 100} % of the rest passing and running (${Math.round(total.share_of_the_rest_passing * 100)} %, ${ranFile.size}/${picked.length} runs)`}`,
);
await finish(0);
