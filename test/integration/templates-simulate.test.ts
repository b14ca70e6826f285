// Every template a newcomer meets (each `cortexd init --template`, as written into their own folder, and every other shipped configuration) passes `cortexd check` and runs 20 s with `--simulate` without an error line on screen.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEMPLATES } from '../../cli/init.js';
import { MAIN } from '../helpers/agent-process.js';
import { requireBuild, requireCommands } from '../helpers/requires.js';

// Eight 20-second runs, four at a time, on a loaded 2-core machine: a hang guard, not a timing assertion.
t.setTimeout(300_000);
requireBuild();
requireCommands(['espeak-ng', 'pocketsphinx_continuous']);

const ROOT = join(import.meta.dirname, '..', '..');
const RUN_FOR = '20s';
/**
 * Runs at once. Two: an agent's start (and the MCP template's tool server, which must answer within
 * its connect timeout) takes most of a core for seconds; more at once on a 2-core machine starve them.
 */
const AT_ONCE = 2;

const tmp = mkdtempSync(join(tmpdir(), 'cortexd-templates-'));
t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
const userConfig = join(tmp, 'config');
mkdirSync(userConfig);

/** A person's environment: none of this machine's cortexd variables, the user's own config folder. */
const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', CORTEX_CONFIG_DIR: userConfig, NO_COLOR: '1', NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '' };
for (const k of Object.keys(env)) if (/^(OM_API_KEY|CORTEX_(BASE|WS_BASE|ASR_WS|VLM_WS|LLM_BASE)_URL|CORTEX_LOG_LEVEL|CONFIG)$/.test(k)) delete env[k];

/**
 * A line that reports something wrong: a failure, an error, a device that cannot open, a refusal, a
 * warning of the log, a stack frame. What a person reads as "this template is broken".
 */
const ERROR_LINE =
  /\b(failed|fail|error|errors|cannot|can't|refused|unsteady|not found|no such|missing|invalid|exception)\b|^\S+ (warning|error|fatal)\b|^\s+at .*:\d+:\d+\)?$/i;

interface Target {
  what: string;
  /** `run` arguments naming the configuration. */
  args: string[];
}

const initTargets: Target[] = Object.keys(TEMPLATES).map((template) => ({ what: `init --template ${template}`, args: [`my_${template.replace(/-/g, '_')}`] }));
const initFiles = new Set<string>(Object.values(TEMPLATES).map((x) => x.file));
const shippedTargets: Target[] = readdirSync(join(ROOT, 'config'))
  .filter((f) => f.endsWith('.json5') && !initFiles.has(f))
  .sort()
  .map((f) => ({ what: `config/${f}`, args: ['--config', join(ROOT, 'config', f)] }));

function run(target: Target): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const state = mkdtempSync(join(tmp, 'state-'));
    const child = spawn(process.execPath, [MAIN, 'run', ...target.args, '--simulate', '--for', RUN_FOR, '--fresh', '--websim-port', '0'], {
      cwd: tmp,
      env: { ...env, CORTEX_STATE_DIR: state },
      // stdin stays open (a person's terminal): typed input does not end.
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.once('close', (code) => (clearTimeout(guard), resolve({ code, out })));
  });
}

t.test('each init template is written into the user folder and passes check', async (t) => {
  for (const [template] of Object.entries(TEMPLATES)) {
    const name = `my_${template.replace(/-/g, '_')}`;
    const r = spawnSync(process.execPath, [MAIN, 'init', name, '--template', template], { cwd: tmp, env, encoding: 'utf8' });
    t.equal(r.status, 0, `init --template ${template}: ${r.stdout}${r.stderr}`);
    t.match(r.stdout, new RegExp(`ok: .*${name}\\.json5`), `${template}: check passes`);
    t.equal(r.stderr.trim(), '', `${template}: no warnings`);
  }
  for (const target of shippedTargets) {
    const r = spawnSync(process.execPath, [MAIN, 'check', ...target.args], { cwd: tmp, env, encoding: 'utf8' });
    t.equal(r.status, 0, `check ${target.what}: ${r.stdout}${r.stderr}`);
    // As it runs below: with --simulate (a checkout without the DDS addon built warns about it otherwise, rightly).
    const sim = spawnSync(process.execPath, [MAIN, 'check', ...target.args, '--simulate'], { cwd: tmp, env, encoding: 'utf8' });
    t.equal(sim.status, 0, `check --simulate ${target.what}: ${sim.stdout}${sim.stderr}`);
    t.equal(sim.stderr.trim(), '', `${target.what} --simulate: no warnings`);
  }
});

t.test(`every template runs ${RUN_FOR} with --simulate without an error line`, async (t) => {
  // The MCP template first: its tool server starts while the machine is least busy.
  const targets = [...initTargets, ...shippedTargets].sort((a, b) => Number(b.what.includes('mcp')) - Number(a.what.includes('mcp')));
  const results = new Map<string, { code: number | null; out: string }>();
  for (let i = 0; i < targets.length; i += AT_ONCE) {
    const batch = targets.slice(i, i + AT_ONCE);
    const done = await Promise.all(batch.map(run));
    batch.forEach((target, k) => results.set(target.what, done[k]!));
  }
  for (const target of targets) {
    const r = results.get(target.what)!;
    t.equal(r.code, 0, `${target.what}: exit 0`, { output: r.out.slice(-3000) });
    t.match(r.out, /SIMULATION \(--simulate\)/, `${target.what}: says it is a simulation`);
    t.match(r.out, new RegExp(`stopping \\(ran for ${RUN_FOR.replace('s', ' s')}\\)`), `${target.what}: ran its ${RUN_FOR}`);
    const bad = r.out.split('\n').filter((l) => ERROR_LINE.test(l));
    t.same(bad, [], `${target.what}: no error line`, { output: r.out.slice(-3000) });
  }
});
