// Proves `cortexd check` predicts the run: every shipped configuration and every corpus configuration that passes check starts, runs 5 s and stops cleanly, with no hook, action, model or tool-server failure caused by the configuration.
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { requireBuild } from '../helpers/requires.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { loadConfig } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

requireBuild();
const ROOT = join(import.meta.dirname, '..', '..');
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
/** The corpus sits beside the clone (`../shared`, as in CI); a worktree one level deeper finds it one more up. */
const CORPUS = [resolve(ROOT, '..', 'shared', 'reference', 'om1-configs'), resolve(ROOT, '..', '..', 'shared', 'reference', 'om1-configs')].find(existsSync);

const files = [
  ...readdirSync(join(ROOT, 'config'))
    .filter((f) => f.endsWith('.json5'))
    .map((f) => join(ROOT, 'config', f)),
  ...(CORPUS
    ? readdirSync(CORPUS)
        .filter((f) => f.endsWith('.json5'))
        .map((f) => join(CORPUS, f))
    : []),
];

const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: '1', CORTEX_WEBSIM_PORT: '0', CORTEX_METRICS_PORT: '', NOTIFY_SOCKET: '', CORTEX_LOG_LEVEL: 'warn' };
for (const k of ['OM_API_KEY', 'CONFIG', 'CORTEX_BASE_URL', 'CORTEX_WS_BASE_URL', 'CORTEX_ASR_WS_URL', 'CORTEX_VLM_WS_URL']) delete env[k];

/**
 * What a configuration problem looks like once running: a hook that fails for a reason check knows
 * (an unknown action, a refused value), an action refused as invalid, a model or tool-server failure,
 * the agent failing. Devices this machine lacks (a microphone, a sound card) are not configuration
 * problems: they are reported and retried, and the speaker falls back to files.
 */
function configFailures(events: AgentEvent[]): string[] {
  // A serial controller that is not plugged in (serial_robot's /dev/ttyUSB0): `cortexd doctor` reports it, not check.
  const absentDevice = /\/dev\/\S+ is not open/;
  const out: string[] = [];
  for (const e of events) {
    if (e.type === 'hook' && !e.ok && !e.cancelled && !absentDevice.test(e.error ?? '')) out.push(`hook ${e.hook_type} ${e.handler_type} failed: ${e.error}`);
    else if (e.type === 'action' && (e as { status?: string }).status === 'failed') out.push(`action failed: ${JSON.stringify(e)}`);
    else if (e.type === 'model.error') out.push(`model error: ${JSON.stringify(e)}`);
    else if (e.type === 'mcp' && e.state === 'failed') out.push(`tool server ${e.server} failed: ${e.detail}`);
    else if (e.type === 'agent.stopped' && e.code !== 0) out.push(`agent stopped with code ${e.code}`);
  }
  return out;
}

/** Runs `cortexd run --config FILE --for 5s --events --fresh` in its own state directory; resolves with exit code, events, stderr. */
function runFor5s(file: string): Promise<{ code: number | null; events: AgentEvent[]; stderr: string }> {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-predict-'));
  const child = spawn(process.execPath, [MAIN, 'run', '--config', file, '--for', '5s', '--events', '--fresh'], {
    cwd: tmpdir(), // not the project: relative paths must not depend on the working directory
    env: { ...env, CORTEX_STATE_DIR: state },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
  const guard = setTimeout(() => child.kill('SIGKILL'), 90_000);
  return new Promise((done) =>
    child.on('close', (code) => {
      clearTimeout(guard);
      rmSync(state, { recursive: true, force: true });
      const events = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as AgentEvent);
      done({ code, events, stderr: err });
    }),
  );
}

/** What `cortexd check --config FILE` decides (it calls loadConfig), in this process: 40 files in a second, not 40 node starts. */
async function passesCheck(file: string): Promise<boolean> {
  try {
    await loadConfig({ file }, { env: { ...env, CORTEX_ENV_FILE: join(tmpdir(), 'no-such.env') } });
    return true;
  } catch (err) {
    if (err instanceof ConfigError) return false;
    throw err;
  }
}
const passing: string[] = [];
for (const file of files) if (await passesCheck(file)) passing.push(file);

t.test('the CLI agrees with the in-process check on the shipped files', async (t) => {
  const r = spawnSync(process.execPath, [MAIN, 'check', '--all'], { env, encoding: 'utf8', timeout: 60_000 });
  t.equal(r.status, 0, r.stdout + r.stderr);
});

t.ok(passing.length >= 5, `the shipped configurations pass check (${passing.length} of ${files.length} files pass)`);

t.test('every configuration that passes check starts and runs 5 s without a configuration failure', async (t) => {
  // All at once: the suite pays about one run's time, not one per file.
  const runs = await Promise.all(passing.map(async (file) => ({ file, ...(await runFor5s(file)) })));
  for (const r of runs) {
    t.equal(r.code, 0, `${r.file}: exit 0`, { stderr: r.stderr.slice(-2000) });
    t.ok(
      r.events.some((e) => e.type === 'agent.started'),
      `${r.file}: started`,
    );
    t.same(configFailures(r.events), [], `${r.file}: no failure that check should have predicted`);
  }
});
