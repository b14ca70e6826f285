// Proves the message, function and action hook handlers, placeholders, and that function modules stay inside the hooks directory.
import t from 'tap';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { mkdtempSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { runHandler } from '../../actors/modes/handlers.js';
import { realClock, type HookEnv, type HookVars } from '../../actors/modes/types.js';
import { LifecycleHook } from '../../src/config/schema.js';
import { captureLogger, config, mode } from '../fixtures/modes/harness.js';

const here = dirname(fileURLToPath(import.meta.url));
const hooksDir = join(here, '..', 'fixtures', 'modes', 'hooks');
const calls = ((globalThis as { __hookCalls?: unknown[] }).__hookCalls ??= []);

const vars: HookVars = { hook_type: 'on_entry', mode_name: 'talk', from_mode: 'idle', to_mode: 'talk', reason: 'keyword "chat"' };
const speakAction = { name: 'speak', llm_label: 'speak', connector: 'tts' };
const cfg = config({
  default_mode: 'talk',
  modes: { talk: mode({ agent_actions: [speakAction, { name: 'Wave Arm', llm_label: 'wave', connector: 'arm' }] }), idle: mode() },
});

function env(extra: Partial<HookEnv> = {}) {
  const log = captureLogger();
  return { env: { config: cfg, clock: realClock, logger: log.logger, hooksDir, ...extra } satisfies HookEnv, log };
}
const parse = (h: Record<string, unknown>) => LifecycleHook.parse({ hook_type: 'on_entry', ...h });
const signal = () => new AbortController().signal;

t.test('message: placeholders filled, spoken through speak when the mode has a speak action', async (t) => {
  const spoken: Array<[string, string]> = [];
  const { env: e } = env({ speak: (text, _s, m) => void spoken.push([text, m]) });
  await runHandler(
    {
      hook: parse({ handler_type: 'message', handler_config: { message: 'From {from_mode} to {to_mode} in {mode_name} because {reason} {unknown}' } }),
      vars,
      env: e,
    },
    signal(),
  );
  t.same(spoken, [['From idle to talk in talk because keyword "chat" {unknown}', 'talk']]);
});

t.test('message: logged when the mode has no speak action', async (t) => {
  const spoken: string[] = [];
  const { env: e, log } = env({ speak: (text) => void spoken.push(text) });
  await runHandler(
    { hook: parse({ handler_type: 'message', handler_config: { message: 'Now in {mode_name}' } }), vars: { ...vars, mode_name: 'idle' }, env: e },
    signal(),
  );
  t.same(spoken, []);
  t.ok(log.messages().includes('Now in idle'));
});

t.test('function: module_name + function, or module.function; sync and async; called with the hook context', async (t) => {
  calls.length = 0;
  const { env: e } = env();
  await runHandler(
    { hook: parse({ handler_type: 'function', handler_config: { module_name: 'recorder', function: 'record', args: { x: 1 } } }), vars, env: e },
    signal(),
  );
  await runHandler({ hook: parse({ handler_type: 'function', handler_config: { function: 'recorder.recordAsync' } }), vars, env: e }, signal());
  t.same(calls, [
    { fn: 'record', hook_type: 'on_entry', mode_name: 'talk', from_mode: 'idle', to_mode: 'talk', args: { x: 1 } },
    { fn: 'recordAsync', hook_type: 'on_entry', mode_name: 'talk' },
  ]);
});

t.test('function: failures are reported (false result, throw, missing function or module)', async (t) => {
  const { env: e } = env();
  const run = (handler_config: Record<string, unknown>) => runHandler({ hook: parse({ handler_type: 'function', handler_config }), vars, env: e }, signal());
  await t.rejects(run({ module_name: 'recorder', function: 'refuse' }), /returned false/);
  await t.rejects(run({ module_name: 'recorder', function: 'explode' }), /hook exploded/);
  await t.rejects(run({ module_name: 'recorder', function: 'missing' }), /no exported function "missing"/);
  await t.rejects(run({ module_name: 'absent', function: 'x' }), /not found/);
  await t.rejects(run({ function: 'lonely' }), /needs handler_config.module_name/);
});

t.test('function: no module outside the hooks directory, by name or by symlink', async (t) => {
  const { env: e } = env();
  const run = (handler_config: Record<string, unknown>, dir = hooksDir) =>
    runHandler({ hook: parse({ handler_type: 'function', handler_config }), vars, env: { ...e, hooksDir: dir } }, signal());
  await t.rejects(run({ module_name: '../outside', function: 'breakOut' }), /not a plain module name/);
  await t.rejects(run({ function: '../outside.breakOut' }), /not a plain module name/);
  await t.rejects(run({ module_name: '/etc/passwd', function: 'x' }), /not a plain module name/);
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-hooks-'));
  symlinkSync(join(here, '..', 'fixtures', 'modes', 'outside.mjs'), join(dir, 'linked.mjs'));
  await t.rejects(run({ module_name: 'linked', function: 'breakOut' }, dir), /resolves outside/);
  t.notOk((globalThis as { __escaped?: boolean }).__escaped, 'the outside module never ran');
});

t.test('function: a hanging function is abandoned when its signal aborts, and sees the abort', async (t) => {
  calls.length = 0;
  const { env: e } = env();
  const c = new AbortController();
  // Abort only once the function runs: aborting earlier (while its module is still loading) never calls it.
  const started = new Promise<void>((resolve) => ((globalThis as { __hangStarted?: () => void }).__hangStarted = resolve));
  const p = runHandler({ hook: parse({ handler_type: 'function', handler_config: { module_name: 'recorder', function: 'hang' } }), vars, env: e }, c.signal);
  await started;
  c.abort();
  await t.rejects(p);
  t.same(calls, [{ fn: 'hang', aborted: true }]);
});

t.test('action: dispatched by llm_label or name with value (or action_config); unknown actions fail', async (t) => {
  const sent: Array<[string, unknown]> = [];
  const { env: e } = env({ dispatchAction: (label, value) => void sent.push([label, value]) });
  const run = (handler_config: Record<string, unknown>) => runHandler({ hook: parse({ handler_type: 'action', handler_config }), vars, env: e }, signal());
  await run({ action: 'wave', value: 'twice' });
  await run({ action_type: 'Wave Arm', action_config: { n: 2 } });
  t.same(sent, [
    ['wave', 'twice'],
    ['wave', { n: 2 }],
  ]);
  await t.rejects(run({ action: 'dance' }), /mode "talk" has no action "dance" \(actions: speak, wave\)/);
  const { env: bare } = env();
  await t.rejects(
    runHandler({ hook: parse({ handler_type: 'action', handler_config: { action: 'wave' } }), vars, env: bare }, signal()),
    /no action dispatcher/,
  );
});
