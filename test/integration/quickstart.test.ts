// QUICKSTART.md followed literally: every command of its `sh` blocks, in order, in a fresh copy of the checkout as a person's shell runs them (agents that run until Ctrl-C get one when they are up).
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshCopy, npmGuard } from '../helpers/fresh-copy.js';
import { requireBuild, requireCommands } from '../helpers/requires.js';

// set-up builds the copy (tsc, about a minute on a loaded machine); three agents start and stop.
t.setTimeout(300_000);
requireBuild();
requireCommands(['espeak-ng', 'pocketsphinx_continuous']);

const repo = join(import.meta.dirname, '../..');
const QUICKSTART = join(repo, 'QUICKSTART.md');
/** Hang guards, not timing assertions. */
const COMMAND_MS = 240_000;
const AGENT_UP_MS = 90_000;

/** The commands of the file's ```sh blocks, in order (```text blocks are shown, not run). */
function quickstartCommands(markdown: string): string[] {
  const commands: string[] = [];
  let inSh = false;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) {
      inSh = !inSh && /^```sh\s*$/.test(line);
      continue;
    }
    if (inSh && line.trim() && !line.trim().startsWith('#')) commands.push(line.trim());
  }
  return commands;
}

/** A person's shell: no test runner loader, no cortexd variables of this run, `cortexd` where set-up links it. */
function shellEnv(tmp: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
  for (const k of Object.keys(env)) if (/^(CORTEX_|TAP|CONFIG$|OM_API_KEY$|NOTIFY_SOCKET$|STATE_DIRECTORY$|RUNTIME_DIRECTORY$)/.test(k)) delete env[k];
  const path = `${npmGuard(join(tmp, 'guard'))}:${join(tmp, 'bin')}:${process.env.PATH}`;
  return { ...env, CORTEX_BIN_DIR: join(tmp, 'bin'), PATH: path, XDG_STATE_HOME: join(tmp, 'state') };
}

/** An agent that runs until Ctrl-C: `cortexd run` with no --for. */
const runsUntilStopped = (command: string) => /^cortexd run\b/.test(command) && !/--for\b/.test(command);

interface Ran {
  code: number | null;
  out: string;
}

function runToEnd(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const guard = setTimeout(() => child.kill('SIGKILL'), COMMAND_MS);
    child.once('close', (code) => (clearTimeout(guard), resolve({ code, out })));
  });
}

/**
 * Runs an agent as a person does: waits for its WebSim address (the page the quickstart opens), types
 * `hello` where it reads typed text, then presses Ctrl-C (SIGINT) and expects a clean exit.
 */
function runAgent(command: string, cwd: string, env: NodeJS.ProcessEnv): Promise<Ran & { up: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', `exec ${command}`], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let up = false;
    const onData = (d: Buffer) => {
      out += d.toString();
      if (!up && /WebSim\b.*http:\/\/127\.0\.0\.1:\d+\//.test(out)) {
        up = true;
        child.stdin.write('hello\n');
        setTimeout(() => child.kill('SIGINT'), 2000);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.stdin.on('error', () => undefined);
    const guard = setTimeout(() => child.kill('SIGKILL'), AGENT_UP_MS);
    child.once('close', (code) => (clearTimeout(guard), resolve({ code, out, up })));
  });
}

t.test('QUICKSTART.md is one screen and its commands work as written', async (t) => {
  const text = readFileSync(QUICKSTART, 'utf8');
  t.ok(text.split('\n').length <= 70, `one screen: ${text.split('\n').length} lines`);
  const commands = quickstartCommands(text);
  t.ok(commands.length >= 6, `${commands.length} commands to follow`);
  t.ok(
    commands.some((c) => c.startsWith('bash scripts/setup.sh')),
    'it starts with the install',
  );

  const tmp = mkdtempSync(join(tmpdir(), 'cortexd-quickstart-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const cwd = join(tmp, 'cortexd');
  freshCopy(cwd);
  const env = shellEnv(tmp);

  for (const command of commands) {
    if (runsUntilStopped(command)) {
      const r = await runAgent(command, cwd, env);
      t.ok(r.up, `${command}: up, its WebSim address printed`, { output: r.out.slice(-3000) });
      t.equal(r.code, 0, `${command}: Ctrl-C stops it cleanly`, { output: r.out.slice(-3000) });
      t.notMatch(r.out, /\n\s+at .*\(.*:\d+:\d+\)/, `${command}: no stack trace`);
    } else {
      const r = await runToEnd(command, cwd, env);
      t.equal(r.code, 0, `${command}: exit 0`, { output: r.out.slice(-3000) });
    }
  }
  t.ok(existsSync(join(cwd, 'config', 'my_robot.json5')), 'the first configuration is in config/');
});
