// Proves `cortexd run` from its one-file build: the default agent runs from the bundle (no package or agent module is loaded as a file), typed text reaches it, and the e-stop worker thread started from the original file answers.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';

t.setTimeout(300_000);
const ROOT = projectRoot();
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const BUNDLE = join(ROOT, 'dist', 'cli', 'run.bundle.cjs');
const TRACER = join(ROOT, 'test', 'fixtures', 'load-trace', 'tracer.mjs');

requireBuild();

/** One line from the unix socket `path` after sending `line`. */
function ask(path: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(path);
    let b = '';
    s.on('connect', () => s.write(`${line}\n`));
    s.on('data', (d) => {
      b += d;
      if (b.includes('\n')) {
        s.destroy();
        resolve(b.trim());
      }
    });
    s.on('error', reject);
  });
}

t.test('run default from the bundle: typed text reaches the agent, the e-stop thread answers, nothing is loaded from the ES modules it holds', async (t) => {
  t.ok(existsSync(BUNDLE) && existsSync(`${BUNDLE}.cache`), 'npm run build wrote the run bundle and its code cache');
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-run-bundle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const trace = join(dir, 'trace.txt');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: '',
    CORTEX_STATE_DIR: dir,
    CORTEX_LOAD_TRACE: trace,
    CORTEX_LOG_LEVEL: 'warn',
    CORTEX_RUNTIME_DIR: join(dir, 'run'),
    NOTIFY_SOCKET: '',
  };
  for (const k of ['CORTEX_CLI_BUNDLE', 'CORTEX_CONFIG_DIR', 'CORTEX_METRICS_PORT', 'CORTEX_DEBUG']) delete env[k];
  const child = spawn(process.execPath, [`--import=${TRACER}`, MAIN, 'run', 'default', '--for', '8s', '--events', '--websim-port', '0'], {
    cwd: ROOT,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  t.teardown(() => void child.kill('SIGKILL'));
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (err += d));
  const seen = (re: RegExp, what: string) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${what} within 120 s\n${out.slice(-2000)}\n${err.slice(-2000)}`)), 120_000);
      const look = () => {
        if (re.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout.on('data', look);
      look();
    });
  child.stdout.setEncoding('utf8').on('data', (d) => (out += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));

  await seen(/"type":"tick"/, 'first tick');
  child.stdin.write('hello from the bundle\n');
  await seen(/"type":"input"[^\n]*hello from the bundle/, 'input event for the typed text');

  const socket = join(dir, 'run', 'estop-default.sock');
  for (let i = 0; !existsSync(socket); i++) {
    if (i > 1200) throw new Error(`the e-stop socket ${socket} never appeared`);
    await new Promise((r) => setTimeout(r, 50));
  }
  t.match(await ask(socket, 'STATUS'), /^OK \{/, 'the e-stop worker thread answers STATUS');

  t.equal(await exited, 0, 'exit 0 after --for', { stderr: err });
  t.match(out, /"type":"agent.stopped"/, 'stopped after --for');

  const loaded = readFileSync(trace, 'utf8').split('\n');
  t.same(
    loaded.filter((l) => /node_modules\/(rxjs|xstate|zod|fastify|ws|commander|pino)\//.test(l)),
    [],
    'rxjs, xstate, zod, fastify, ws, commander and pino come from the bundle',
  );
  const fromDist = new Set(loaded.filter((l) => l.includes(`${ROOT}/dist/`)).map((l) => l.slice(l.indexOf('/dist/') + 1)));
  t.ok(
    ['dist/cli/main.js', 'dist/cli/bundle.js', 'dist/actors/safety/estop-socket-worker.js'].every((f) => fromDist.has(f)),
    'the entry, the loader and the worker file',
  );
  // The e-stop worker thread loads its own few modules (estop-gate.js) from dist, as it did before the bundle.
  t.same(
    [
      'dist/cli/program.js',
      'dist/cli/run.js',
      'dist/actors/agent/agent.js',
      'dist/actors/process/process.js',
      'dist/src/service/index.js',
      'dist/src/config/load.js',
    ].filter((f) => fromDist.has(f)),
    [],
    'the program, the agent, the service and the config loader come from the bundle',
  );
});
