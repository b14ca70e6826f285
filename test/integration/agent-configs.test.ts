// Every shipped configuration checks and draws with the built CLI; the default companion runs its hooks in order and its explore mode hears the shipped recording.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { MAIN, startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { resolveHookFunction } from '../../actors/modes/handlers.js';
import type { AgentEvent } from '../../src/cortex/events.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;
const ROOT = join(import.meta.dirname, '..', '..');
const CONFIG = join(ROOT, 'config');
const names = readdirSync(CONFIG)
  .filter((f) => f.endsWith('.json5'))
  .map((f) => f.slice(0, -'.json5'.length))
  .sort();

interface Hook {
  handler_type: string;
  handler_config: { function?: string; module_name?: string };
}
interface RawMode {
  lifecycle_hooks?: Hook[];
  agent_inputs?: Array<{ type: string; config?: Record<string, unknown> }>;
  simulators?: unknown[];
}
interface RawConfig {
  global_lifecycle_hooks?: Hook[];
  modes: Record<string, RawMode>;
}
const raw = (name: string) => JSON5.parse(readFileSync(join(CONFIG, `${name}.json5`), 'utf8')) as RawConfig;

t.test('the shipped configurations are the nine documented ones', async (t) => {
  t.same(names, ['conversation', 'default', 'lidar_rover', 'local_llm', 'mcp_tools', 'ros2_base', 'ros2_topics', 'serial_robot', 'unitree_go2']);
});

t.test('cortexd check --all passes without warnings (conversation uses the embedded service until CORTEX_BASE_URL is set)', async (t) => {
  const env: NodeJS.ProcessEnv = { ...process.env, OM_API_KEY: '' };
  for (const k of ['CORTEX_BASE_URL', 'CORTEX_ASR_WS_URL', 'CORTEX_WS_BASE_URL', 'CORTEX_VLM_WS_URL']) delete env[k];
  const r = spawnSync(process.execPath, [MAIN, 'check', '--all'], { env, encoding: 'utf8', cwd: ROOT });
  t.equal(r.status, 0, r.stderr);
  for (const n of names) t.match(r.stdout, new RegExp(`ok: config/${n}\\.json5`));
  t.same(r.stderr.split('\n').filter(Boolean), [], 'no warnings');
});

for (const name of names) {
  t.test(`${name}: graph --format json is a machine with every mode; its files exist`, async (t) => {
    const out = execFileSync(process.execPath, [MAIN, 'graph', name, '--format', 'json'], {
      encoding: 'utf8',
      cwd: ROOT,
      env: { ...process.env, OM_API_KEY: '' },
    });
    const machine = JSON.parse(out) as { initial: string; states: Record<string, unknown> };
    const cfg = raw(name);
    t.same(Object.keys(machine.states).sort(), Object.keys(cfg.modes).sort());
    t.ok(cfg.modes[machine.initial], 'the initial state is a mode');
    const hooks = [...(cfg.global_lifecycle_hooks ?? []), ...Object.values(cfg.modes).flatMap((m) => m.lifecycle_hooks ?? [])];
    for (const h of hooks.filter((x) => x.handler_type === 'function')) {
      const fn = await resolveHookFunction(join(CONFIG, 'hooks'), h.handler_config.module_name, h.handler_config.function ?? '');
      t.type(fn, 'function', `function hook ${h.handler_config.module_name ?? ''}.${h.handler_config.function} resolves`);
    }
    for (const input of Object.values(cfg.modes).flatMap((m) => m.agent_inputs ?? [])) {
      const mic = input.config?.microphone as { binding?: string; file?: string } | undefined;
      if (mic?.binding === 'replay') t.ok(existsSync(mic.file!.replace('${CONFIG_DIR}', CONFIG)), `replayed recording ${mic.file} is shipped`);
    }
  });
}

t.test('default uses every hook type', async (t) => {
  const cfg = raw('default');
  const types = new Set(
    [...(cfg.global_lifecycle_hooks ?? []), ...Object.values(cfg.modes).flatMap((m) => m.lifecycle_hooks ?? [])].map((h) => h.handler_type),
  );
  t.same([...types].sort(), ['action', 'command', 'function', 'message']);
});

t.test('the default agent: hooks in priority order on entry, keywords switch modes, explore hears the shipped recording and answers aloud', async (t) => {
  const w = workDir();
  const journal = w.file('journal.log');
  writeFileSync(journal, '');
  const cfg = raw('default');
  for (const mode of Object.values(cfg.modes)) {
    mode.simulators = []; // tests run in parallel: no page on the fixed port 8000
    for (const input of mode.agent_inputs ?? []) {
      if (input.type === 'TextInput') input.config = { ...input.config, source: 'socket', path: w.socket };
      // The copy lives in a temporary directory: its ${CONFIG_DIR} must still name the shipped media.
      const mic = input.config?.microphone as { file?: string } | undefined;
      if (mic?.file) mic.file = mic.file.replace('${CONFIG_DIR}', CONFIG);
    }
    for (const h of mode.lifecycle_hooks ?? []) if (h.handler_type === 'function') (h.handler_config as { args?: unknown }).args = { journal };
  }
  const config = w.file('default.json5');
  writeFileSync(config, JSON.stringify(cfg));
  const agent = startAgent(config, w.state, ['--for', '120s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const stamp = (line: string) => Date.parse(line.split(' ')[0]!);
  const journalLines = () => readFileSync(journal, 'utf8').trim().split('\n').filter(Boolean);

  // idle on_entry: action (priority 5), then function (3), then the spoken message (0, async).
  const greeting = await agent.waitFor<Ev<'action'>>((e) => e.type === 'action' && e.label === 'speak' && e.state === 'queued', 20_000, 'idle greeting');
  t.same(greeting.value, { sentence: "I'm resting now. Say hello to chat." });
  const neutral = agent.events.find((e) => e.type === 'action' && e.label === 'emotion' && e.state === 'done') as Ev<'action'>;
  t.same(neutral?.value, { emotion: 'neutral' });
  t.match(journalLines()[0], / companion on_entry - -> idle \(startup\)$/);
  t.ok(neutral.at <= stamp(journalLines()[0]!) && stamp(journalLines()[0]!) <= greeting.at, 'action, function, message: in priority order');

  await agent.waitFor((e) => e.type === 'tick' && e.mode === 'idle', 10_000, 'a tick in idle');
  await typeLines(w.socket, ['hello']);
  t.match(await agent.waitFor((e) => e.type === 'mode.changed', 10_000, 'switch to conversation'), { from: 'idle', to: 'conversation', rule_index: 0 });
  const switching = await agent.waitFor<Ev<'action'>>(
    (e) => e.type === 'action' && e.mode === 'conversation' && e.state === 'queued',
    10_000,
    'conversation greeting',
  );
  t.same(switching.value, { sentence: 'Switching from idle to conversation. What shall we talk about?' }, 'message placeholders are filled');
  t.match(journalLines()[1], /on_entry idle -> conversation \(keyword "hello"\)/);

  await agent.waitFor((e) => e.type === 'tick' && e.mode === 'conversation', 10_000, 'a tick in conversation');
  await typeLines(w.socket, ["let's explore"]);
  t.match(await agent.waitFor((e) => e.type === 'mode.changed' && e.to === 'explore', 10_000, 'switch to explore'), { from: 'conversation', rule_index: 7 });
  const curious = await agent.waitFor<Ev<'action'>>(
    (e) => e.type === 'action' && e.mode === 'explore' && e.label === 'emotion' && e.state === 'done',
    10_000,
    'curious face',
  );
  t.same(curious.value, { emotion: 'curious' });

  // The replayed microphone says "turn left": recognised, and the model turns and says so.
  const heard = await agent.waitFor<Ev<'input'>>((e) => e.type === 'input' && e.input === 'SpeechlabASRInput' && e.final, 45_000, 'a transcript');
  t.equal(heard.text, 'turn left');
  const answer = await agent.waitFor<Ev<'model.answer'>>(
    (e) => e.type === 'model.answer' && e.mode === 'explore' && e.tool_calls.length > 0,
    15_000,
    'an answer',
  );
  t.same(answer.tool_calls, [
    { name: 'move', arguments: { action: 'turn left' } },
    { name: 'speak', arguments: { sentence: 'Okay, turn left.' } },
  ]);
  await agent.waitFor((e) => e.type === 'action' && e.label === 'move' && e.state === 'done', 10_000, 'move done');
  await agent.waitFor(
    (e) => e.type === 'action' && e.label === 'speak' && e.state === 'done' && (e.value as { sentence?: string }).sentence === 'Okay, turn left.',
    15_000,
    'speak done',
  );
  t.ok(
    agent.events.some((e) => e.type === 'input' && e.input === 'LocalVLMInput'),
    'the synthetic camera is described',
  );
  const clips = readdirSync(join(w.state, 'speech')).filter((f) => f.endsWith('.wav'));
  t.ok(clips.length >= 1, `espeak-ng clips in the state directory (${clips.join(', ')})`);

  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'exit 0 after SIGTERM');
  t.ok(
    agent.events.some(
      (e) =>
        e.type === 'action' && e.mode === 'explore' && e.label === 'move' && e.state === 'done' && (e.value as { action?: string }).action === 'stand still',
    ),
    "explore's on_exit action stopped the motors",
  );
  t.ok(
    agent.events.some((e) => e.type === 'action' && e.label === 'speak' && (e.value as { sentence?: string }).sentence === 'Goodbye, see you soon.'),
    'the on_shutdown message was spoken',
  );
  // A greeting still being spoken when the test switches on is cancelled by leaving its mode (reported as cancelled); nothing may fail.
  const failed = agent.events.filter((e): e is Ev<'hook'> => e.type === 'hook' && !e.ok && !e.cancelled);
  t.same(failed, [], 'no hook failed');
});
