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

/**
 * What a person types to an agent and what it then shows: a ```text block right after the ```sh block
 * whose last command runs the agent, its `> ` lines typed, its other lines expected in the output.
 */
interface Transcript {
  typed: string[];
  expected: string[];
}

interface Step {
  command: string;
  transcript?: Transcript;
}

/** The commands of the file's ```sh blocks, in order (```text blocks are shown, not run; a transcript block goes with the command before it). */
function quickstartCommands(markdown: string): Step[] {
  const steps: Step[] = [];
  let block: 'sh' | 'text' | 'other' | undefined;
  let text: string[] = [];
  let lastBlock: 'sh' | 'text' | 'other' | undefined;
  for (const line of markdown.split('\n')) {
    if (/^```/.test(line)) {
      if (block === undefined) {
        block = /^```sh\s*$/.test(line) ? 'sh' : /^```text\s*$/.test(line) ? 'text' : 'other';
        text = [];
      } else {
        const typed = text.filter((l) => l.startsWith('> ')).map((l) => l.slice(2).trim());
        // A transcript: right after the sh block (nothing but prose between), of an agent that runs until Ctrl-C.
        const last = steps.at(-1);
        if (block === 'text' && typed.length > 0 && lastBlock === 'sh' && last && runsUntilStopped(last.command))
          last.transcript = { typed, expected: text.filter((l) => l.trim() && !l.startsWith('> ')).map((l) => l.trim()) };
        lastBlock = block;
        block = undefined;
      }
      continue;
    }
    if (block === 'sh' && line.trim() && !line.trim().startsWith('#')) steps.push({ command: line.trim() });
    else if (block !== undefined) text.push(line);
  }
  return steps;
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
 * `hello` where it reads typed text (or the transcript's lines, then waits for what it says appears),
 * then presses Ctrl-C (SIGINT) and expects a clean exit.
 */
function runAgent(command: string, cwd: string, env: NodeJS.ProcessEnv, transcript?: Transcript): Promise<Ran & { up: boolean }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', `exec ${command}`], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let up = false;
    let stopping = false;
    /** Once the lines are typed: Ctrl-C when everything the transcript shows has appeared. */
    let shown: (() => void) | undefined;
    const stop = (afterMs: number) => {
      if (stopping) return;
      stopping = true;
      setTimeout(() => child.kill('SIGINT'), afterMs);
    };
    const onData = (d: Buffer) => {
      out += d.toString();
      if (!up && /WebSim\b.*http:\/\/127\.0\.0\.1:\d+\//.test(out)) {
        up = true;
        const mark = out.length;
        child.stdin.write(`${(transcript?.typed ?? ['hello']).join('\n')}\n`);
        if (!transcript) stop(2000);
        else
          shown = () => {
            if (transcript.expected.every((e) => out.slice(mark).includes(e))) stop(500);
          };
      }
      shown?.();
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.stdin.on('error', () => undefined);
    const guard = setTimeout(() => child.kill('SIGKILL'), AGENT_UP_MS);
    // A transcript that never shows: Ctrl-C before the guard, so the output says what was shown instead.
    const late = transcript ? setTimeout(() => stop(0), AGENT_UP_MS - 15_000) : undefined;
    child.once('close', (code) => (clearTimeout(guard), clearTimeout(late), resolve({ code, out, up })));
  });
}

t.test('QUICKSTART.md is one screen and its commands work as written', async (t) => {
  const text = readFileSync(QUICKSTART, 'utf8');
  t.ok(text.split('\n').length <= 70, `one screen: ${text.split('\n').length} lines`);
  const steps = quickstartCommands(text);
  t.ok(steps.length >= 6, `${steps.length} commands to follow`);
  t.ok(
    steps.some((c) => c.command.startsWith('bash scripts/setup.sh')),
    'it starts with the install',
  );
  const transcripts = steps.filter((s) => s.transcript);
  t.ok(transcripts.length >= 1, 'the first edit shows what the robot then says');

  const tmp = mkdtempSync(join(tmpdir(), 'cortexd-quickstart-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const cwd = join(tmp, 'cortexd');
  freshCopy(cwd);
  const env = shellEnv(tmp);

  for (const { command, transcript } of steps) {
    if (runsUntilStopped(command)) {
      const r = await runAgent(command, cwd, env, transcript);
      t.ok(r.up, `${command}: up, its WebSim address printed`, { output: r.out.slice(-3000) });
      for (const line of transcript?.expected ?? [])
        t.ok(r.out.includes(line), `${command}: after ${JSON.stringify(transcript!.typed)} it shows ${JSON.stringify(line)}`, { output: r.out.slice(-3000) });
      t.equal(r.code, 0, `${command}: Ctrl-C stops it cleanly`, { output: r.out.slice(-3000) });
      t.notMatch(r.out, /\n\s+at .*\(.*:\d+:\d+\)/, `${command}: no stack trace`);
    } else {
      const r = await runToEnd(command, cwd, env);
      t.equal(r.code, 0, `${command}: exit 0`, { output: r.out.slice(-3000) });
    }
  }
  t.ok(existsSync(join(cwd, 'config', 'my_robot.json5')), 'the first configuration is in config/');
  t.notMatch(readFileSync(join(cwd, 'config', 'my_robot.json5'), 'utf8'), /\bPip\b/, 'the first edit renamed the robot');
});
