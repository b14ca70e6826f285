// context_aware rules fire on real inputs: a battery read from sysfs drops below 20 % -> charging mode; the camera sees motion -> alert mode; a value typed in WebSim -> greeting mode.
import t from 'tap';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { WebSocket } from 'ws';
import type { AgentEvent } from '../../src/cortex/events.js';
import { startAgent, workDir } from '../helpers/agent-process.js';

type Changed = Extract<AgentEvent, { type: 'mode.changed' }>;

const mode = (name: string, inputs: unknown[]) => ({
  display_name: name,
  description: name,
  system_prompt_base: `You are in ${name}.`,
  hertz: 2,
  agent_inputs: inputs,
  agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'console' }],
});

t.test('a battery below 20 % and not charging switches to the charging mode; plugging in switches back', async (t) => {
  const w = workDir();
  const sysfs = w.file('power_supply');
  mkdirSync(join(sysfs, 'BAT0'), { recursive: true });
  const battery = (capacity: number, status: string) => {
    writeFileSync(join(sysfs, 'BAT0', 'type'), 'Battery\n');
    writeFileSync(join(sysfs, 'BAT0', 'capacity'), `${capacity}\n`);
    writeFileSync(join(sysfs, 'BAT0', 'status'), `${status}\n`);
  };
  battery(80, 'Discharging');
  const input = { type: 'BatteryInput', config: { path: sysfs, poll_seconds: 0.2 } };
  const config = w.file('battery.json5');
  writeFileSync(
    config,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'battery',
      default_mode: 'roam',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: '',
      system_governance: 'obey',
      service: { base_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0, skip_idle: true } },
      modes: { roam: mode('roam', [input]), charging: mode('charging', [input]) },
      transition_rules: [
        {
          from_mode: 'roam',
          to_mode: 'charging',
          transition_type: 'context_aware',
          context_conditions: { battery_percent: { max: 20 }, battery_charging: false },
          priority: 1,
        },
        { from_mode: 'charging', to_mode: 'roam', transition_type: 'context_aware', context_conditions: { battery_charging: true }, priority: 1 },
      ],
    }),
  );
  const agent = startAgent(config, w.state, ['--for', '60s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'tick' && e.mode === 'roam', 20_000, 'roaming');
  t.notOk(
    agent.events.some((e) => e.type === 'mode.changed'),
    'at 80 % nothing happens',
  );

  battery(15, 'Discharging');
  const low = await agent.waitFor<Changed>((e) => e.type === 'mode.changed' && e.to === 'charging', 20_000, 'the switch to charging');
  t.match(low, { from: 'roam', trigger: 'context_aware' });
  battery(16, 'Charging');
  const back = await agent.waitFor<Changed>((e) => e.type === 'mode.changed' && e.to === 'roam', 20_000, 'the switch back on the charger');
  t.match(back, { from: 'charging', trigger: 'context_aware' });
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});

t.test('motion seen by the camera switches a calm mode to an alert mode', async (t) => {
  const w = workDir();
  const camera = { type: 'LocalVLMInput', config: { fps: 4, camera: { binding: 'synthetic', width: 320, height: 240, fps: 8 } } };
  const config = w.file('motion.json5');
  writeFileSync(
    config,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'motion',
      default_mode: 'calm',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: '',
      system_governance: 'obey',
      service: { base_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 } },
      modes: { calm: mode('calm', [camera]), alert: mode('alert', [camera]) },
      transition_rules: [
        { from_mode: 'calm', to_mode: 'alert', transition_type: 'context_aware', context_conditions: { motion: ['slight', 'strong'] }, priority: 1 },
      ],
    }),
  );
  const agent = startAgent(config, w.state, ['--for', '60s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  // The synthetic camera draws a moving disc: the second analysed frame already sees it move.
  const alert = await agent.waitFor<Changed>((e) => e.type === 'mode.changed' && e.to === 'alert', 30_000, 'the switch to alert');
  t.match(alert, { from: 'calm', trigger: 'context_aware' });
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});

t.test('a context value set in WebSim reaches the rules: visitor = true switches to the greeting mode', async (t) => {
  const w = workDir();
  const config = w.file('greeter.json5');
  const withSim = (name: string) => ({ ...mode(name, [{ type: 'TextInput' }]), simulators: [{ type: 'WebSim', config: { port: 0 } }] });
  writeFileSync(
    config,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'greeter',
      default_mode: 'idle',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: '',
      system_governance: 'obey',
      service: { base_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0, skip_idle: true } },
      modes: { idle: withSim('idle'), greeting: withSim('greeting') },
      transition_rules: [
        { from_mode: 'idle', to_mode: 'greeting', transition_type: 'context_aware', context_conditions: { visitor: true, visitors: { min: 1 } }, priority: 1 },
      ],
    }),
  );
  const agent = startAgent(config, w.state, ['--for', '60s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const ready = await agent.waitFor<Extract<AgentEvent, { type: 'simulator.ready' }>>((e) => e.type === 'simulator.ready', 20_000, 'WebSim listening');
  // Context values need the WebSim token: the generated one, from the file the ready event names.
  const token = readFileSync(ready.token_file!, 'utf8').trim();
  const ws = new WebSocket(`${ready.url.replace('http', 'ws')}events?token=${encodeURIComponent(token)}`);
  t.teardown(() => ws.close());
  const replies = new Map<number, { ok: boolean; reason?: string }>();
  ws.on('message', (d) => {
    const m = JSON.parse(d.toString()) as { type: string; id?: number; ok?: boolean; reason?: string };
    if (m.type === 'reply' && m.id !== undefined) replies.set(m.id, { ok: m.ok === true, ...(m.reason ? { reason: m.reason } : {}) });
  });
  await new Promise((resolve, reject) => (ws.once('open', resolve), ws.once('error', reject)));
  const set = async (id: number, name: string, value: string) => {
    ws.send(JSON.stringify({ type: 'context', id, name, value }));
    for (let i = 0; i < 200 && !replies.has(id); i++) await new Promise((r) => setTimeout(r, 25));
    return replies.get(id);
  };
  t.same(await set(1, 'visitor', 'true'), { ok: true, reason: 'visitor = true' }, 'typed as a boolean');
  await agent.waitFor((e) => e.type === 'context' && e.source === 'websim', 10_000, 'the value on the bus');
  t.notOk(
    agent.events.some((e) => e.type === 'mode.changed'),
    'one condition of two is not enough',
  );
  t.same(await set(2, 'visitors', '2'), { ok: true, reason: 'visitors = 2' }, 'typed as a number');
  const changed = await agent.waitFor<Changed>((e) => e.type === 'mode.changed' && e.to === 'greeting', 20_000, 'the switch to greeting');
  t.match(changed, { from: 'idle', trigger: 'context_aware' });
  ws.send('{"type":"context","id":3,"name":"bad name","value":"x"}');
  await new Promise((resolve) => ws.once('close', resolve));
  t.pass('a malformed context message closes the page socket, the agent runs on');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});
