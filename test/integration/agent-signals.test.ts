// Stopping a real agent process: a second SIGTERM exits at once; kill -9 while switching modes loses no saved mode.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import type { AgentEvent } from '../../src/cortex/events.js';

const base = (extra: string) => `{ version: "v1.0.5", name: "s", allow_manual_switching: true, mode_memory_enabled: true, api_key: "", system_governance: "",
  cortex_llm: { type: "CloudLLM" }, service: { base_url: "embedded" }, ${extra} }`;

t.test('a second SIGTERM exits at once while on_shutdown hooks still run', async (t) => {
  const w = workDir();
  const config = w.file('slow.json5');
  writeFileSync(
    config,
    base(`default_mode: "a",
      global_lifecycle_hooks: [{ hook_type: "on_shutdown", handler_type: "command", handler_config: { command: "sleep 8" }, timeout_seconds: 9 }],
      modes: { a: { display_name: "A", description: "d", system_prompt_base: "p", hertz: 5 } }`),
  );
  const agent = startAgent(config, w.state);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'tick', 10_000, 'first tick');
  agent.child.kill('SIGTERM');
  await agent.waitFor((e) => e.type === 'agent.stopping', 5000, 'stopping');
  const second = Date.now();
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 130, 'exit 130 on the second signal');
  t.ok(agent.exitedAt()! - second < 2000, `exited ${agent.exitedAt()! - second} ms after the second signal, not after the 8 s hook`);
  t.match(agent.stderr(), /second SIGTERM/);
});

t.test('kill -9 in the middle of mode switching loses no saved mode: the restart resumes the last switch', async (t) => {
  const w = workDir();
  const config = w.file('cycle.json5');
  const input = `agent_inputs: [{ type: "TextInput", config: { source: "socket", path: "${w.socket}" } }]`;
  const mode = (n: string) => `${n}: { display_name: "${n}", description: "d", system_prompt_base: "p", hertz: 50, ${input} }`;
  const rule = (from: string, to: string) =>
    `{ from_mode: "${from}", to_mode: "${to}", transition_type: "input_triggered", trigger_keywords: ["go ${to}"], priority: 1 }`;
  writeFileSync(
    config,
    base(`default_mode: "a", modes: { ${mode('a')}, ${mode('b')}, ${mode('c')} }, transition_rules: [${rule('a', 'b')}, ${rule('b', 'c')}, ${rule('c', 'a')}]`),
  );
  const next: Record<string, string> = { a: 'b', b: 'c', c: 'a' };

  const agent = startAgent(config, w.state);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  let current = 'a';
  await agent.waitFor((e) => e.type === 'tick' && e.mode === 'a', 10_000, 'tick in a');
  for (let i = 0; i < 7; i++) {
    const to = next[current]!;
    await typeLines(w.socket, [`go ${to}`]);
    await agent.waitFor((e) => e.type === 'tick' && e.mode === to, 10_000, `tick in ${to}`);
    current = to;
  }
  // One more switch, killed while it runs (its on_exit/on_entry and the memory write are in flight).
  const to = next[current]!;
  await typeLines(w.socket, [`go ${to}`]);
  agent.child.kill('SIGKILL');
  await agent.exited;
  const changes = agent.events.filter((e): e is Extract<AgentEvent, { type: 'mode.changed' }> => e.type === 'mode.changed');
  const lastSeen = changes.at(-1)!.to;

  const again = startAgent(config, w.state, ['--for', '1s']);
  t.teardown(() => void again.child.kill('SIGKILL'));
  const started = await again.waitFor<Extract<AgentEvent, { type: 'agent.started' }>>((e) => e.type === 'agent.started', 10_000, 'agent.started');
  t.ok([lastSeen, next[lastSeen]].includes(started.mode), `restored ${started.mode}; last switch seen before the kill was to ${lastSeen}`);
  t.equal(await again.exited, 0);
  t.notOk(
    again.events.some((e) => e.type === 'error' && e.source === 'mode_memory'),
    'the memory file was intact',
  );
});
