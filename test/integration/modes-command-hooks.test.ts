// Proves command hooks run real programs without a shell: argv, placeholders, exit codes, output logged, killed at timeout.
import t from 'tap';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitFor } from 'xstate';
import { config, hook, mode, start } from '../fixtures/modes/harness.js';
import { runHandler } from '../../actors/modes/handlers.js';
import { realClock, type HookVars } from '../../actors/modes/types.js';
import { LifecycleHook } from '../../src/config/schema.js';
import { captureLogger } from '../fixtures/modes/harness.js';

const vars: HookVars = { hook_type: 'on_entry', mode_name: 'b', from_mode: 'a', to_mode: 'b', reason: 'keyword "go"; rm -rf $HOME' };
const toB = [{ from_mode: 'a', to_mode: 'b', transition_type: 'input_triggered', trigger_keywords: ['go'], priority: 1 }];

function run(command: string, signal = new AbortController().signal) {
  const log = captureLogger();
  const cfg = config();
  const p = runHandler(
    {
      hook: LifecycleHook.parse({ hook_type: 'on_entry', handler_type: 'command', handler_config: { command } }),
      vars,
      env: { config: cfg, clock: realClock, logger: log.logger, hooksDir: '/nonexistent' },
    },
    signal,
  );
  return { p, log };
}

t.test('placeholders go into argv elements; nothing is interpreted by a shell', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-cmd-'));
  const out = join(dir, 'args.json');
  const script = `require("fs").writeFileSync(process.argv[1], JSON.stringify(process.argv.slice(2)))`;
  const { p, log } = run(`${process.execPath} -e '${script}' ${out} {from_mode} "to {to_mode}" {reason} '$HOME' "*"`);
  await p;
  t.same(JSON.parse(readFileSync(out, 'utf8')), ['a', 'to b', 'keyword "go"; rm -rf $HOME', '$HOME', '*']);
  t.ok(log.messages().some((m) => m.includes('succeeded')));
});

t.test('a non-zero exit is a failure with the exit code and stderr; output is logged', async (t) => {
  const { p, log } = run(`${process.execPath} -e 'console.log("out-line"); console.error("err-line"); process.exit(3)'`);
  await t.rejects(p, /exited with code 3: err-line/);
  const line = log.lines.find((l) => String(l.msg).includes('failed'));
  t.match(line, { stdout: 'out-line', stderr: 'err-line' });
});

t.test('a missing program fails clearly', async (t) => {
  const { p } = run('/nonexistent/program --flag');
  await t.rejects(p, /could not start/);
});

t.test('an aborted command is killed', async (t) => {
  const c = new AbortController();
  const { p } = run(`${process.execPath} -e 'setInterval(() => {}, 1000)'`, c.signal);
  setTimeout(() => c.abort(), 100);
  await t.rejects(p, /was killed \(SIGTERM\)/);
});

t.test('in the machine: a command entry hook that outlives its timeout is killed and on_failure applies', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-cmd-'));
  const marker = join(dir, 'started');
  const slow = `${process.execPath} -e 'require("fs").writeFileSync("${marker}", "1"); setInterval(() => {}, 1000)'`;
  const cfg = config({
    modes: {
      a: mode(),
      b: mode({ lifecycle_hooks: [hook('on_entry', 'command', { command: slow }, { timeout_seconds: 2, on_failure: 'abort' })] }),
      c: mode(),
    },
    transition_rules: toB,
  });
  const m = start(cfg);
  await m.active('a');
  m.actor.send({ type: 'input.text', text: 'go' });
  await m.reach('b', 'entering');
  // Wait (bounded) until the child really runs, then let its timeout elapse on the simulated clock.
  const deadline = Date.now() + 10_000;
  while (!existsSync(marker) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  t.ok(existsSync(marker), 'the command started');
  m.clock.increment(2000);
  await waitFor(m.actor, (s) => s.context.mode === 'a' && s.hasTag('active'), { timeout: 10_000 });
  t.match(m.of('mode.aborted')[0], { to: 'b', reason: /timed out after 2 s/ });
  m.actor.stop();
});
