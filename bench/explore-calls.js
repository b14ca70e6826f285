// Benchmark: model calls and CU of the default agent's 60 s explore mode (replayed microphone, synthetic camera), against the same agent with every input set to `wake: "always"` (a call per new message, the behaviour before the meaningful-change gate), run side by side.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { finish, quick, spawn } from './lib/bench.js';

const ROOT = join(import.meta.dirname, '..');
const main = join(ROOT, 'dist', 'cli', 'main.js');
/** The project's calls per tick of explore must stay under this, and under the baseline's. */
const TARGET_CALLS_PER_TICK = 0.3;

/** A copy of config/default.json5 (WebSim on any free port), edited by `edit`, with its media and hooks beside it. */
function configCopy(change) {
  // `--quick`: explore times out after 4 s instead of 60.
  const edit = (t) => change(quick ? t.replace('timeout_seconds: 60,', 'timeout_seconds: 4,') : t);
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-explore-'));
  const text = readFileSync(join(ROOT, 'config', 'default.json5'), 'utf8').replaceAll(
    'simulators: [{ type: "WebSim" }]',
    'simulators: [{ type: "WebSim", config: { port: 0 } }]',
  );
  writeFileSync(join(dir, 'default.json5'), edit(text));
  cpSync(join(ROOT, 'config', 'media'), join(dir, 'media'), { recursive: true });
  cpSync(join(ROOT, 'config', 'hooks'), join(dir, 'hooks'), { recursive: true });
  return { dir, config: join(dir, 'default.json5'), state: join(dir, 'state') };
}

/** Runs the agent, says "let's explore", and counts what happens in explore until its timeout switches back to idle. */
function explore(name, copy) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [main, 'run', '--config', copy.config, '--events', '--fresh'], {
      env: { ...process.env, CORTEX_STATE_DIR: copy.state, CORTEX_LOG_LEVEL: 'error', NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '' },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    const r = { name, ticks: 0, model_calls: 0, model_errors: 0, cu: 0, ms: 0, heard: 0, frames_described: 0 };
    let enteredAt;
    let buf = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const e = JSON.parse(line);
        if (e.type === 'tick' && e.mode === 'idle' && enteredAt === undefined && r.ticks === 0) child.stdin.write("let's explore\n");
        if (e.type === 'mode.changed' && e.to === 'explore') enteredAt = e.at;
        if (enteredAt === undefined || e.mode !== 'explore') {
          if (e.type === 'mode.changed' && e.from === 'explore') {
            r.ms = e.at - enteredAt;
            child.kill('SIGTERM');
          }
          continue;
        }
        if (e.type === 'tick') r.ticks++;
        if (e.type === 'model.answer') r.model_calls++, (r.cu += e.cost_cu ?? 0);
        if (e.type === 'model.error') r.model_calls++, r.model_errors++;
        if (e.type === 'input' && e.final) r.heard++;
        if (e.type === 'input' && e.input === 'LocalVLMInput') r.frames_described++;
      }
    });
    child.on('exit', () => (r.ms > 0 ? resolve(r) : reject(new Error(`${name}: the agent ended before explore timed out`))));
  });
}

const project = configCopy((t) => t);
const baseline = configCopy((t) =>
  t
    .replace('{ descriptor: "Voice", language: "en",', '{ wake: "always", descriptor: "Voice", language: "en",')
    .replace('{ descriptor: "Vision", fps: 1,', '{ wake: "always", descriptor: "Vision", fps: 1,'),
);
const [p, b] = await Promise.all([explore('project', project), explore('baseline (wake: "always")', baseline)]);
const perTick = (r) => +(r.model_calls / Math.max(1, r.ticks)).toFixed(3);
const result = {
  project: { ...p, calls_per_tick: perTick(p) },
  baseline: { ...b, calls_per_tick: perTick(b) },
  calls_ratio: +(p.model_calls / Math.max(1, b.model_calls)).toFixed(3),
  cu_ratio: +(p.cu / Math.max(1, b.cu)).toFixed(3),
};
console.log(JSON.stringify(result, null, 2));
const missed = [];
if (perTick(p) > TARGET_CALLS_PER_TICK) missed.push(`${perTick(p)} calls per tick > ${TARGET_CALLS_PER_TICK}`);
if (p.model_calls >= b.model_calls) missed.push('no fewer calls than the baseline');
console.log(
  `explore-calls: ${p.model_calls} model calls, ${p.cu} CU in ${(p.ms / 1000).toFixed(0)} s of explore (${p.ticks} ticks, ${p.heard} finals heard); ` +
    `baseline with wake "always": ${b.model_calls} calls, ${b.cu} CU (${b.ticks} ticks); ${missed.length ? `MISSED target: ${missed.join('; ')}` : 'within target'}`,
);
await finish(0);
