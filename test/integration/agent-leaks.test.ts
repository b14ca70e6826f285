// Switching modes 1,000 times leaks nothing: active handles and timers, the actors of the tree and the heap stay flat.
import t from 'tap';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { pino } from 'pino';
import type { AnyActorRef } from 'xstate';
import { Agent } from '../../actors/agent/agent.js';
import { builtinPlugins, resolvePlugins } from '../../actors/plugin-registry.js';
import type { LoadedConfig } from '../../src/config/schema.js';
import { AgentConfig } from '../../src/config/schema.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Every live actor under `ref` (itself included), by id: what the inspector would show. */
function tree(ref: AnyActorRef, out: string[] = []): string[] {
  const snap = ref.getSnapshot() as { status: string; children?: Record<string, AnyActorRef | undefined> };
  if (snap.status !== 'active') return out;
  out.push(ref.id);
  for (const child of Object.values(snap.children ?? {})) if (child) tree(child, out);
  return out;
}

function counts(): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) out[r] = (out[r] ?? 0) + 1;
  return out;
}

t.test('1,000 manual mode switches with inputs, actions and 100 Hz loops: resources and heap stay flat', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-leaks-'));
  const mode = (n: string) => ({
    display_name: n,
    description: 'd',
    system_prompt_base: 'p',
    hertz: 100,
    agent_inputs: [{ type: 'TextInput', config: { source: 'socket', path: join(dir, `${n}.sock`) } }],
    agent_actions: [
      { name: 'speak', llm_label: 'speak', connector: 'console' },
      { name: 'face', llm_label: 'emotion', connector: 'console' },
    ],
    lifecycle_hooks: [{ hook_type: 'on_entry', handler_type: 'action', handler_config: { action: 'emotion', value: { emotion: 'joy' } } }],
    cortex_llm: { type: 'CloudLLM', config: {} },
  });
  const config = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'leaks',
    default_mode: 'a',
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    modes: { a: mode('a'), b: mode('b') },
  });
  const loaded = { file: 'x', configName: 'leaks', legacy: false, config, apiKey: '', addresses: {}, warnings: [] } as unknown as LoadedConfig;
  const plugins = await resolvePlugins(builtinPlugins, loaded.config);
  const agent = new Agent({ loaded, plugins, logger: pino({ level: 'silent' }), stateDir: dir, memory: false });
  let ticks = 0;
  agent.bus.events$.subscribe((e) => e.type === 'tick' && ticks++);
  t.teardown(() => agent.stop('teardown'));
  const tickIn = (m: string) =>
    new Promise<void>((resolve) => {
      const sub = agent.bus.events$.subscribe((e) => e.type === 'tick' && e.mode === m && (sub.unsubscribe(), resolve()));
    });
  const first = tickIn('a');
  agent.start();
  await first;

  /** A manual switch, then the new mode's first tick (its on_entry hooks are done and its loop runs). */
  const switchTo = async (m: string) => {
    const ticked = tickIn(m);
    const r = await agent.switchMode(m, 'leak test');
    if (!r.ok) throw new Error(`switch to ${m} refused: ${r.reason}`);
    await ticked;
  };
  for (let i = 0; i < 100; i++) await switchTo(i % 2 ? 'a' : 'b');
  await new Promise((r) => setImmediate(r));
  gc();
  const before = { resources: counts(), heap: process.memoryUsage().heapUsed, actors: tree(agent.root) };
  for (let i = 0; i < 1000; i++) await switchTo(i % 2 ? 'a' : 'b');
  await new Promise((r) => setImmediate(r));
  gc();
  const after = { resources: counts(), heap: process.memoryUsage().heapUsed, actors: tree(agent.root) };

  t.ok(ticks >= 1000, `loops ticked (${ticks} ticks)`);
  // Closed pipes and servers leave the list when libuv finishes closing them, so counts may shrink; one
  // leaked resource per switch would show up as +1000.
  const grown = Object.entries(after.resources).filter(([k, n]) => n > (before.resources[k] ?? 0) + 2);
  t.same(
    grown,
    [],
    `no kind of active resource grew over 1,000 switches (before ${JSON.stringify(before.resources)}, after ${JSON.stringify(after.resources)})`,
  );
  // The tree of a running mode is the same after 1,000 switches (a tick in flight adds one `tick` actor).
  const kinds = (ids: string[]) => [...new Set(ids.filter((id) => id !== 'tick'))].sort();
  t.same(kinds(after.actors), kinds(before.actors), 'the same actors live in the tree');
  t.ok(after.actors.length <= before.actors.length + 1, `${after.actors.length} actors after, ${before.actors.length} before`);
  t.ok(
    after.actors.includes('input:TextInput') && after.actors.includes('loop') && after.actors.includes('action:speak'),
    `the tree: ${after.actors.join(', ')}`,
  );
  const grownMb = (after.heap - before.heap) / 1024 / 1024;
  t.ok(grownMb < 8, `heap grew ${grownMb.toFixed(2)} MB over 1,000 switches`);
  agent.stop('test over');
  t.equal((await agent.done).code, 0);
  gc();
  t.notOk(process.getActiveResourcesInfo().includes('PipeServerWrap'), 'no socket server left after stop');
});
