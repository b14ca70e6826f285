// Proves a --watch reload whose configuration passes check but does not start (its start-up hook aborts): the process says so and runs the previous configuration again, under the same root.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import type { AgentEvent } from '../../src/cortex/events.js';
import { startAgent, workDir } from '../helpers/agent-process.js';
import { agentConfig } from '../helpers/fleet.js';
import { requireBuild } from '../helpers/requires.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

t.test('a saved configuration that does not start: the previous one runs again, and a good save after it is taken', async (t) => {
  requireBuild();
  const w = workDir();
  const file = w.file('robot.json5');
  const config = agentConfig({ socket: w.socket, fleet: { enabled: false } });
  writeFileSync(file, config, { mode: 0o644 });
  const agent = startAgent(file, w.state, ['--for', '60s', '--watch']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const starts = () => agent.events.filter((e): e is Ev<'agent.started'> => e.type === 'agent.started');
  await agent.waitFor((e) => e.type === 'tick', 20_000, 'the first tick');

  // Valid for check; its start-up hook fails and aborts the start, before any tick.
  const failing = config.replace(
    'fleet: {',
    'global_lifecycle_hooks: [{ hook_type: "on_startup", handler_type: "command", handler_config: { command: "/bin/false" }, on_failure: "abort" }], fleet: {',
  );
  writeFileSync(file, failing.replace('default_mode: "idle"', 'default_mode: "busy"'));
  const said = await agent.waitFor<Ev<'error'>>(
    (e) => e.type === 'error' && e.source === 'reload' && /did not start/.test(e.message),
    20_000,
    'the failed start',
  );
  t.match(said.message, /^the new configuration did not start: .+; the previous one runs again$/);
  await agent.waitFor(() => starts().length === 3, 20_000, 'the previous configuration started again');
  t.same(
    starts().map((e) => e.mode),
    ['idle', 'busy', 'idle'],
    'first, the save that failed, then the first again',
  );
  const ticksBefore = agent.events.filter((e) => e.type === 'tick').length;
  await agent.waitFor(() => agent.events.filter((e) => e.type === 'tick').length > ticksBefore, 20_000, 'the previous configuration ticks again');

  writeFileSync(file, config.replace('default_mode: "idle"', 'default_mode: "sleep"'));
  await agent.waitFor(() => starts().length === 4, 20_000, 'a good save after the failed one');
  t.equal(starts().at(-1)!.mode, 'sleep', 'a reload is taken again after the fallback');
  t.equal(agent.child.exitCode, null, 'the process runs on');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});
