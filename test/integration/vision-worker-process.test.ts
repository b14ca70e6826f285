// LocalVLMInput's OpenCV worker is a real child process owned by the input: it runs while the mode that has the input runs, a crash restarts it, leaving the mode ends it.
import t from 'tap';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { Agent } from '../../actors/agent/agent.js';
import { builtinPlugins, resolvePlugins } from '../../actors/plugin-registry.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import { AgentConfig } from '../../src/config/schema.js';
import { onBus, until } from '../helpers/wait.js';

t.setTimeout(300_000);

/** Pids of this process's descendants running the vision worker module, from /proc. */
function visionWorkers(): number[] {
  const parentOf = new Map<number, number>();
  const cmd = new Map<number, string>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
      cmd.set(Number(name), readFileSync(`/proc/${name}/cmdline`, 'utf8'));
    } catch {
      // Gone meanwhile.
    }
  }
  const mine = (pid: number): boolean => {
    for (let p = parentOf.get(pid); p !== undefined && p > 1; p = parentOf.get(p)) if (p === process.pid) return true;
    return false;
  };
  return [...cmd].filter(([pid, c]) => c.includes('local-vlm-worker') && mine(pid)).map(([pid]) => pid);
}

const alive = (pid: number): boolean => {
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
};

t.test('the vision worker exists in explore, is restarted after a crash and is gone after the switch to idle', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-vision-worker-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const mode = (inputs: unknown[]) => ({
    display_name: 'm',
    description: 'd',
    system_prompt_base: 'p',
    hertz: 2,
    agent_inputs: inputs,
    agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'console' }],
    cortex_llm: { type: 'CloudLLM', config: {} },
  });
  const camera = { type: 'LocalVLMInput', config: { fps: 4, camera: { binding: 'synthetic', width: 160, height: 120, fps: 8 } } };
  const config = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'vision-worker',
    default_mode: 'explore',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    modes: { explore: mode([camera]), idle: mode([]) },
  });
  const loaded = { file: 'x', configName: 'vision-worker', legacy: false, config, apiKey: '', addresses: {}, warnings: [] } as unknown as LoadedConfig;
  const plugins = await resolvePlugins(builtinPlugins, loaded.config);
  const agent = new Agent({ loaded, plugins, logger: pino({ level: 'silent' }), stateDir: dir, memory: false });
  t.teardown(() => agent.stop('teardown'));
  const analysis = onBus(agent.bus, (e) => e.type === 'context' && e.source === 'input.LocalVLMInput', 'the first analysis in explore');
  agent.start();

  await analysis;
  const [first, ...more] = visionWorkers();
  t.ok(first !== undefined && alive(first), `one vision worker runs in explore (pid ${first})`);
  t.same(more, [], 'only one');
  const opencv = 'opencv4nodejs';
  t.ok(readFileSync(`/proc/${first}/maps`, 'utf8').includes(opencv), 'the worker loaded OpenCV');
  t.notOk(readFileSync('/proc/self/maps', 'utf8').includes(opencv), 'the agent itself never loaded OpenCV: the worker has it');

  // A crash of the worker is a failure of the input: reported, and the input restarts with a new worker.
  const failure = onBus(agent.bus, (e) => e.type === 'error' && e.source === 'input.LocalVLMInput', 'the input failure on the bus');
  process.kill(first!, 'SIGKILL');
  await failure;
  // Processes are polled (every 100 ms): nothing in this process says when another one starts or ends.
  await until('a new vision worker after the restart', () => visionWorkers().some((p) => p !== first && alive(p)), 60_000, 100);
  const second = visionWorkers().find((p) => p !== first)!;

  const r = await agent.switchMode('idle', 'test');
  t.ok(r.ok, 'switched to idle');
  await until('the worker to end after the switch', () => !alive(second), 10_000, 100);
  t.same(visionWorkers(), [], 'no vision worker runs in idle');

  agent.stop('test over');
  t.equal((await agent.done).code, 0, 'the agent stops cleanly');
});
