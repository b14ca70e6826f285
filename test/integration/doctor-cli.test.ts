// Proves `cortexd doctor` as a real process prints one status line per check on this machine and exits 1 exactly when a check fails.
import t, { type Test } from 'tap';
import { tsLoaderArgs } from '../helpers/ts-loader.js';
import { requireBuild } from '../helpers/requires.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const repo = join(import.meta.dirname, '../..');
const built = join(repo, 'dist/cli/main.js');

/** Runs doctor through its commander registration, the way main.ts wires it. */
const RUNNER = `
import { Command } from ${JSON.stringify(pathToFileURL(join(repo, 'node_modules/commander/esm.mjs')).href)};
import { register } from ${JSON.stringify(pathToFileURL(join(repo, 'cli/doctor.ts')).href)};
const program = new Command('cortexd').exitOverride();
register(program);
await program.parseAsync(process.argv.slice(2), { from: 'user' });
`;

function run(args: string[], env: NodeJS.ProcessEnv, script?: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const argv = script ? [...tsLoaderArgs, script, ...args] : [built, ...args];
    const child = spawn(process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const killer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('close', (code) => {
      clearTimeout(killer);
      resolve({ code, out, err });
    });
  });
}

function setup(t: Test): { dir: string; env: NodeJS.ProcessEnv; script: string } {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-doctor-cli-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'doctor.mts');
  writeFileSync(script, RUNNER);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NODE_OPTIONS: '',
    CORTEX_STATE_DIR: join(dir, 'state'),
    CORTEX_SERVICE_ENV_FILE: join(dir, 'env'),
    CORTEX_CONFIG_DIR: join(dir, 'config'),
    CORTEX_ENV_FILE: join(dir, 'dotenv'),
  };
  for (const k of ['CONFIG', 'OM_API_KEY', 'CORTEX_BASE_URL', 'CORTEX_WS_BASE_URL', 'CORTEX_ASR_WS_URL', 'CORTEX_VLM_WS_URL', 'STATE_DIRECTORY']) delete env[k];
  return { dir, env, script };
}

const LINE = /^(ok {2}|warn|FAIL) [^:]+: .+$/;

t.test('on this machine without a configuration: only warnings, exit 0', async (t) => {
  const { env, script } = setup(t);
  const r = await run(['doctor'], env, script);
  const lines = r.out.trim().split('\n');
  const summary = lines.pop()!;
  t.equal(r.code, 0, r.out + r.err);
  for (const l of lines) t.match(l, LINE, 'one status line per check');
  for (const l of lines.filter((x) => !x.startsWith('ok'))) t.match(l, / -> fix: \S/, `a fix for: ${l.slice(0, 40)}`);
  t.match(summary, /^\d+ ok, \d+ warn, 0 fail$/);
  t.match(r.out, /^ok {3}node: Node\.js 2\d\./m);
  t.match(r.out, /^ok {3}state directory: .*state is writable$/m);
  if (!existsSync('/dev/video0')) t.match(r.out, /^warn camera: \/dev\/video0 does not exist/m, 'no camera here: a warning, nothing uses it');
  t.match(r.out, /^(ok {2}|warn) microphone: /m);
});

t.test('the service env file is read: a placeholder key and a dead address fail, exit 1', async (t) => {
  const { dir, env, script } = setup(t);
  writeFileSync(join(dir, 'env'), 'OM_API_KEY=openmind_free\nCORTEX_BASE_URL=http://127.0.0.1:9\n');
  const r = await run(['doctor', '--timeout', '1000'], env, script);
  t.equal(r.code, 1, r.out);
  t.match(r.out, /^ok {3}environment file: /m);
  t.match(r.out, /^FAIL API key: the key is the placeholder "openmind_free".* -> fix: put OM_API_KEY=/m);
  t.match(r.out, /^FAIL reach http:\/\/127\.0\.0\.1:9: /m);
  t.match(r.out, / [1-9]\d* fail$/m);
});

t.test('an invalid configuration fails with the first problem, exit 1', async (t) => {
  const { dir, env, script } = setup(t);
  const file = join(dir, 'bad.json5');
  writeFileSync(file, '{ version: "v1.0.5", name: "bad", modes: {} ');
  const r = await run(['doctor', '--config', file, '--json'], env, script);
  t.equal(r.code, 1, r.out + r.err);
  const results = JSON.parse(r.out) as Array<{ status: string; name: string; fix?: string }>;
  const cfg = results.find((x) => x.name === 'configuration');
  t.equal(cfg?.status, 'fail');
  t.match(cfg?.fix, /cortexd check --config/);
});

t.test('the built CLI runs doctor', async (t) => {
  requireBuild();
  const { env } = setup(t);
  const r = await run(['doctor'], env);
  t.equal(r.code, 0, r.out + r.err);
  t.match(r.out, /^ok {3}node: /m);
});
