// `cortexd run --inspect`: the process is one tree (root `cortexd` -> signals, watchdog, service, agent), and a reload is seen as the agent subtree stopped and a new one started under the same root; every context it shows is data.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import type { AgentEvent } from '../../src/cortex/events.js';
import { built, startAgent, workDir } from '../helpers/agent-process.js';
import { inspectServer, type InspectMsg } from '../helpers/inspect-server.js';

type Msg = InspectMsg;

const config = (socket: string, defaultMode: string) => `{
  version: "v1.0.5", name: "tree", default_mode: "${defaultMode}", allow_manual_switching: true, mode_memory_enabled: false,
  api_key: "k", system_governance: "obey", service: { base_url: "http://127.0.0.1:9" },
  cortex_llm: { type: "LocalLLM", config: { base_url: "http://127.0.0.1:9/v1", retry: false, timeout_seconds: 2 } },
  modes: {
    idle: { display_name: "Idle", description: "d", system_prompt_base: "rest", hertz: 5,
      agent_inputs: [{ type: "TextInput", config: { source: "socket", path: "${socket}", descriptor: "Voice" } }],
      agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }] },
    busy: { display_name: "Busy", description: "d", system_prompt_base: "work", hertz: 5,
      agent_inputs: [{ type: "TextInput", config: { source: "socket", path: "${socket}", descriptor: "Voice" } }],
      agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }] },
  },
}`;

t.test('a --watch reload stops the agent subtree and starts the new one under the same root', { skip: !built && 'run `npm run build` first' }, async (t) => {
  const { url, msgs } = await inspectServer(t.teardown);

  const w = workDir();
  const file = w.file('tree.json5');
  writeFileSync(file, config(w.socket, 'idle'), { mode: 0o644 });
  const agent = startAgent(file, w.state, ['--inspect', url, '--watch', '--for', '60s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'tick' && e.mode === 'idle', 20_000, 'a tick of the first configuration');
  writeFileSync(file, config(w.socket, 'busy'));
  await agent.waitFor((e) => e.type === 'tick' && e.mode === 'busy', 20_000, 'a tick of the saved configuration');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'SIGTERM after the reload: exit 0');
  const started = agent.events.filter((e): e is Extract<AgentEvent, { type: 'agent.started' }> => e.type === 'agent.started');
  t.same(
    started.map((e) => e.mode),
    ['idle', 'busy'],
    'two agents in one process',
  );

  const actors = msgs.filter((m) => m.type === '@xstate.actor');
  const root = actors[0]!;
  t.equal(root.name, 'cortexd', 'the root is the process');
  t.same([...new Set(actors.map((a) => a.rootId))], [root.sessionId], `all ${actors.length} actors share the one root`);
  const childrenOf = (parent: Msg) => actors.filter((a) => a.parentId === parent.sessionId);
  const underRoot = childrenOf(root).map((a) => a.name);
  for (const name of ['signals', 'watchdog', 'service'])
    t.equal(underRoot.filter((n) => n === name).length, 1, `one ${name} under the root, for the whole run`);
  const agents = childrenOf(root).filter((a) => a.name === 'agent');
  t.equal(agents.length, 2, 'two agent subtrees under the root: the first and the reloaded one');
  const [first, second] = agents as [Msg, Msg];
  t.not(first.sessionId, second.sessionId);

  // Everything under the first agent, depth first.
  const subtree = (top: Msg): Msg[] => [top, ...childrenOf(top).flatMap(subtree)];
  const firstTree = subtree(first);
  t.ok(firstTree.some((a) => a.name === 'modes') && firstTree.some((a) => a.name === 'mode:idle'), 'the first subtree holds the mode machine and mode:idle');
  t.ok(
    subtree(second).some((a) => a.name === 'mode:busy'),
    'the second subtree holds mode:busy',
  );
  const endedAt = (id: string) =>
    msgs.findIndex((m) => m.type === '@xstate.snapshot' && m.sessionId === id && (m.snapshot?.status === 'stopped' || m.snapshot?.status === 'done'));
  const statusOf = (id: string) => msgs[endedAt(id)]?.snapshot?.status;
  const secondAt = msgs.indexOf(second);
  // The root hears that the first agent is done before it spawns the second one. XState reports a
  // finished actor's last snapshot after its parent has handled the done event, so actors that ended
  // by finishing (status done) may be reported after; every stopped one is reported before.
  const doneHeard = msgs.findIndex(
    (m) => m.type === '@xstate.event' && m.sessionId === root.sessionId && (m as { event?: { type?: string } }).event?.type === 'xstate.done.actor.agent',
  );
  t.ok(doneHeard >= 0 && doneHeard < secondAt, 'the root heard the first agent finish before the second started');
  for (const a of firstTree) {
    const at = endedAt(a.sessionId);
    t.ok(
      at >= 0 && (at < secondAt || statusOf(a.sessionId) === 'done'),
      `${a.name} of the first agent ended (${statusOf(a.sessionId)}) before the second agent started`,
    );
  }
  // Contexts are data: the inspector's sanitiser (actors/modes/inspect.ts) shows a function as "[function]"
  // and a class instance as "[ClassName]"; no actor of the process, the root included, holds either.
  const services = msgs
    .filter((m) => m.type === '@xstate.snapshot')
    .flatMap((m) => {
      const text = JSON.stringify((m.snapshot as { context?: unknown } | undefined)?.context ?? null);
      const found = text.match(/"\[(function|[A-Z][A-Za-z]*)\]"/g);
      return found ? [`${actors.find((a) => a.sessionId === m.sessionId)?.name}: ${[...new Set(found)].join(', ')}`] : [];
    });
  t.same([...new Set(services)], [], 'every context the inspector saw is data (no function, no class instance)');
  const serviceActor = childrenOf(root).find((a) => a.name === 'service')!;
  t.ok(
    msgs.indexOf(serviceActor) < msgs.indexOf(first),
    'the one service was up before the first agent and served the second too (its address did not change)',
  );
});
