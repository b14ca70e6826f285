// SLOW, about 2 minutes (npm ci and compiling better-sqlite3 12 for Node 20 in a fresh copy): set-up with OpenCV skipped, install.sh's production tree, and an audio-only agent run from that tree end to end.
import { requireCommands } from '../helpers/requires.js';
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { startAgent, typeLines } from '../helpers/agent-process.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { SQLITE_NODE20, sqlitePackage } from '../../src/service/sqlite.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

// npm ci, the native builds and TypeScript take most of it; the agent itself needs well under a minute.
t.setTimeout(15 * 60_000);

const repo = join(import.meta.dirname, '../..');
const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: repo, encoding: 'utf8' });
const tools = ['espeak-ng', 'pocketsphinx_continuous', 'npm'].filter((p) => spawnSync('sh', ['-c', `command -v ${p}`]).status !== 0);
if (listed.status !== 0) throw new Error('not a git checkout: cannot tell the sources from build output');
requireCommands(tools);

/** The checkout's files as a fresh clone has them (plus uncommitted ones): no node_modules, no dist. */
function copyCheckout(dest: string): void {
  for (const file of listed.stdout.split('\0').filter(Boolean)) {
    if (/^(node_modules|dist|test-output|\.tap)(\/|$)/.test(file) || !existsSync(join(repo, file))) continue;
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    cpSync(join(repo, file), join(dest, file));
  }
}

/** The environment of a person at a shell: no test runner loader, no cortexd variables of this run. */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '', npm_config_prefer_offline: 'true', ...extra };
  for (const k of Object.keys(env)) if (/^(CORTEX_|TAP|JOBS$|CONFIG$|OM_API_KEY$|NOTIFY_SOCKET$)/.test(k)) delete env[k];
  return env;
}

function run(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('close', (code) => resolve({ code, out }));
  });
}

t.test('set-up --no-opencv, install.sh, and an audio-only agent from the production tree', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'cortexd-setup-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const src = join(tmp, 'checkout');
  copyCheckout(src);

  // `cortexd` goes on PATH in a directory of this test, not the machine's /usr/local/bin.
  const bin = join(tmp, 'bin');
  const setup = await run('bash', ['scripts/setup.sh', '--no-run', '--no-opencv'], src, {
    ...shellEnv(),
    CORTEX_BIN_DIR: bin,
    PATH: `${bin}:${process.env.PATH}`,
  });
  if (setup.code !== 0) t.comment(setup.out.slice(-4000));
  t.equal(setup.code, 0, 'set-up exits 0');
  t.match(setup.out, /^setup: skipping OpenCV \(--no-opencv\)/m, 'set-up says that it skips OpenCV');
  t.notMatch(setup.out, /install-scripts/, 'npm has no unapproved install scripts to warn about');
  for (const m of ['better-sqlite3', 'unix-dgram', 'serial binding']) t.match(setup.out, new RegExp(`^ok {3}${m}: `, 'm'), `${m} loads after set-up`);
  t.notOk(existsSync(join(src, 'node_modules/@u4/opencv4nodejs/build/Release/opencv4nodejs.node')), 'OpenCV was not compiled');
  t.match(setup.out, new RegExp(`^setup: cortexd is on PATH: ${bin}/cortexd -> ${src}/scripts/cortexd$`, 'm'));
  const onPath = await run('cortexd', ['check', 'default'], tmp, { ...shellEnv(), PATH: `${bin}:${process.env.PATH}` });
  t.match(onPath.out, /^ok: .*default\.json5 \(4 modes\)$/m, '`cortexd check default` works from any directory through the link');

  // A configuration that needs OpenCV is named, with the fix, before anything starts.
  const check = await run(process.execPath, ['dist/cli/main.js', 'check', 'default'], src, shellEnv());
  t.equal(check.code, 0, 'a warning, not an error: the file itself is valid');
  t.match(
    check.out,
    /modes\.explore\.agent_inputs\[1\]: LocalVLMInput .* through OpenCV, but @u4\/opencv4nodejs is installed without its compiled bindings.* Fix: run `bash scripts\/setup\.sh` without --no-opencv/,
  );

  const root = join(tmp, 'root');
  const install = await run('bash', ['systemd/install.sh', '--prefix', root, '--source', src, '--node', process.execPath], src, shellEnv());
  if (install.code !== 0) t.comment(install.out.slice(-4000));
  t.equal(install.code, 0, 'install.sh exits 0');
  t.match(install.out, /OpenCV is left out/);
  t.match(install.out, /^cortexd: installed size: \d+ MB in \S+ \(node_modules \d+ MB; the source's node_modules: \d+ MB\)$/m);
  const opt = join(root, 'opt/cortexd');
  // (@types/node is there: mqtt lists its type packages as dependencies, so npm installs them for production.)
  for (const dev of ['typescript', 'tap', 'playwright-core', '@biomejs/biome', 'mermaid', '@u4/opencv4nodejs']) {
    t.notOk(existsSync(join(opt, 'node_modules', dev)), `no ${dev} in the production tree`);
  }
  // Node-API 9 (Node 20) runs better-sqlite3 12, compiled at set-up; from 10 on, 13's binary comes in the npm package.
  const sqlite = sqlitePackage();
  if (sqlite === SQLITE_NODE20) {
    t.ok(existsSync(join(opt, 'node_modules', sqlite, 'build/Release/better_sqlite3.node')), `the compiled sqlite module (${sqlite}) is there`);
    t.notOk(existsSync(join(opt, 'node_modules', sqlite, 'build/Release/obj.target')), 'its objects are not');
  } else {
    t.ok(existsSync(join(opt, 'node_modules', sqlite, `prebuilds/linux-${process.arch}.node`)), 'better-sqlite3 13 with its binary for this machine');
  }

  // Audio only: typed text and a replayed recording in, espeak-ng speech out, the embedded service in between.
  const dir = join(tmp, 'run');
  mkdirSync(dir);
  const socket = join(dir, 'in.sock');
  const speech = join(dir, 'speech');
  const wav = join(root, 'etc/cortexd/config/media/turn_left.wav');
  const config = join(dir, 'audio.json5');
  writeFileSync(
    config,
    `{ $schema: "./schema.json", version: "v1.0.5", name: "audio", default_mode: "listen", allow_manual_switching: false, mode_memory_enabled: false,
       api_key: "", system_governance: "", service: { base_url: "embedded" },
       cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini" } },
       modes: { listen: { display_name: "Listen", description: "d", system_prompt_base: "You are a robot. Follow spoken directions.", hertz: 2,
         agent_inputs: [
           { type: "TextInput", config: { source: "socket", path: ${JSON.stringify(socket)}, descriptor: "Voice (typed)" } },
           { type: "SpeechlabASRInput", config: { descriptor: "Voice", language: "en", microphone: { binding: "replay", file: ${JSON.stringify(wav)}, loop: true } } } ],
         agent_actions: [
           { name: "speak", llm_label: "speak", connector: "local_tts", config: { speaker: { binding: "file", dir: ${JSON.stringify(speech)}, realtime: false } } },
           { name: "move", llm_label: "move", connector: "console" } ] } } }`,
  );
  const agent = startAgent(config, join(dir, 'state'), ['--for', '120s'], { NODE_OPTIONS: '' }, join(opt, 'dist/cli/main.js'));
  t.teardown(() => void agent.child.kill('SIGKILL'));

  await agent.waitFor((e) => e.type === 'agent.started', 30_000, 'the agent to start');
  await typeLines(socket, ['hello']);
  const typed = await agent.waitFor<Ev<'input'>>((e) => e.type === 'input' && e.input === 'TextInput', 15_000, 'the typed line');
  t.equal(typed.text, 'hello');
  // The recording loops, and a loaded machine can cut a first pass short (a fragment heard as "hi"): the
  // recogniser must hear the words within the loop.
  const heard = await agent.waitFor<Ev<'input'>>(
    (e) => e.type === 'input' && e.input === 'SpeechlabASRInput' && e.final && e.text === 'turn left',
    60_000,
    'a transcript "turn left" of the recording',
  );
  t.equal(heard.text, 'turn left', 'the embedded recogniser (pocketsphinx) heard the recording');
  // A fragment of the loop heard as another command ("stop") may move the robot first: the answer to
  // the words of the recording is the one that turns left.
  const answer = await agent.waitFor<Ev<'model.answer'>>(
    (e) => e.type === 'model.answer' && e.tool_calls.some((c) => c.name === 'move' && (c.arguments as { action?: unknown }).action === 'turn left'),
    20_000,
    'an answer that turns left',
  );
  t.match(answer.tool_calls, [{ name: 'move', arguments: { action: 'turn left' } }]);
  await agent.waitFor((e) => e.type === 'action' && e.label === 'speak' && e.state === 'done', 30_000, 'speech synthesised');
  const clips = readdirSync(speech).filter((f) => f.endsWith('.wav'));
  t.ok(clips.length >= 1, `espeak-ng wrote speech (${clips.join(', ')})`);

  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'exit 0 after SIGTERM');
  t.notOk(
    agent.events.some((e) => e.type === 'error'),
    `no error events: ${JSON.stringify(agent.events.filter((e) => e.type === 'error'))}`,
  );
});
