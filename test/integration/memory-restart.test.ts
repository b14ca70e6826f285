// Memory and knowledge in a real agent process: a fact told in one run is in the prompt of the next run, knowledge passages come with their source, forget works.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { type AgentProcess, MAIN, startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import type { AgentEvent } from '../../src/cortex/events.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

/** A configuration with typed text on a socket, memory on, a knowledge folder next to it; the model is not there (calls fail fast: prompts are all this needs). */
function setup() {
  const w = workDir();
  mkdirSync(w.file('docs'), { recursive: true });
  writeFileSync(w.file('docs/cafe.md'), '# Café\n\nThe Lighthouse Café on the ground floor serves coffee and cake until 17:30.\n');
  writeFileSync(w.file('docs/whale.md'), '# Whale\n\nThe fin whale skeleton is 19 metres long.\n');
  const config = w.file('robot.json5');
  writeFileSync(
    config,
    `{
      version: "v1.0.5", name: "guide", default_mode: "guide", allow_manual_switching: true, mode_memory_enabled: false,
      api_key: "k", system_governance: "obey", service: { base_url: "http://127.0.0.1:9" },
      cortex_llm: { type: "LocalLLM", config: { base_url: "http://127.0.0.1:9/v1", retry: false, timeout_seconds: 2, history_length: 0 } },
      memory: { enabled: true },
      knowledge_base: { knowledge_base_name: "museum", knowledge_base_root: "docs", top_k: 2 },
      modes: {
        guide: { display_name: "Guide", description: "d", system_prompt_base: "You guide visitors.", hertz: 5,
          agent_inputs: [{ type: "TextInput", config: { source: "socket", path: "${w.socket}", descriptor: "Voice" } }],
          agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }] },
      },
    }`,
  );
  return { w, config };
}

/** Types `line` and returns the prompt of the tick that heard it, and its recall event. */
async function ask(agent: AgentProcess, socket: string, line: string): Promise<{ prompt: string; recall: Ev<'recall'> }> {
  const before = agent.events.length;
  await typeLines(socket, [line]);
  const recall = await agent.waitFor<Ev<'recall'>>(
    (e) => e.type === 'recall' && e.query.includes(line) && agent.events.indexOf(e) >= before,
    15_000,
    `recall of "${line}"`,
  );
  const prompt = await agent.waitFor<Ev<'prompt'>>((e) => e.type === 'prompt' && e.tick === recall.tick, 15_000, `prompt of "${line}"`);
  return { prompt: prompt.prompt, recall };
}

async function stop(agent: AgentProcess): Promise<void> {
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'the agent stops cleanly');
}

t.test('a fact told in one run is in the prompt of a later run; knowledge comes with its source; forget removes the facts', async (t) => {
  const { w, config } = setup();
  const first = startAgent(config, w.state, ['--for', '60s']);
  t.teardown(() => void first.child.kill('SIGKILL'));
  await first.waitFor((e) => e.type === 'tick', 20_000, 'first tick');
  const told = await ask(first, w.socket, 'Hello, my name is Ada. I take my coffee black.');
  t.notMatch(told.prompt, /MEMORIES/, 'nothing remembered in the first run');
  await stop(first);

  const second = startAgent(config, w.state, ['--for', '60s']);
  t.teardown(() => void second.child.kill('SIGKILL'));
  await second.waitFor((e) => e.type === 'tick', 20_000, 'first tick of the second run');
  const later = await ask(second, w.socket, 'Where can I get a coffee?');
  t.match(later.prompt, /Ada told you: I take my coffee black/, 'the fact from the first run is in the prompt');
  t.match(later.prompt, /KNOWLEDGE[^\n]*\n\[1\] cafe\.md \(Café\):\nThe Lighthouse Café/, 'the passage of the knowledge base, with its source');
  t.match(later.recall.used, [{ kind: 'knowledge', source: 'cafe.md' }], 'the recall event names the passage');
  t.ok(
    later.recall.used.some((u) => u.kind === 'fact' && u.person === 'Ada'),
    'and the memory',
  );
  const unrelated = await ask(second, w.socket, 'Is there a swimming pool on the roof?');
  t.same(unrelated.recall.used, [], 'a question nothing answers gets no passage and no memory');
  t.notMatch(unrelated.prompt, /KNOWLEDGE|MEMORIES/);

  await ask(second, w.socket, 'my name is Ada');
  const forgot = await ask(second, w.socket, 'Please forget what I told you.');
  t.match(forgot.prompt, /forgotten 2 things Ada told you/, 'the robot is told it forgot');
  const after = await ask(second, w.socket, 'How do I take my coffee?');
  t.notMatch(after.prompt, /coffee black/, 'the fact is gone');
  await stop(second);
});

t.test('a conversation is summarised by the configured model when the agent stops, and kept as a memory of the person', async (t) => {
  const w = workDir();
  const config = w.file('robot.json5');
  // The embedded local service: its rule-based model answers turns and the summary (a metered chat call like any other).
  writeFileSync(
    config,
    `{
      version: "v1.0.5", name: "guide", default_mode: "guide", allow_manual_switching: true, mode_memory_enabled: false,
      api_key: "openmind_free", system_governance: "obey", service: { base_url: "embedded" },
      cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini", history_length: 0 } },
      memory: { enabled: true },
      modes: {
        guide: { display_name: "Guide", description: "d", system_prompt_base: "You guide visitors.", hertz: 5,
          agent_inputs: [{ type: "TextInput", config: { source: "socket", path: "${w.socket}", descriptor: "Voice" } }],
          agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }] },
      },
    }`,
  );
  const agent = startAgent(config, w.state, ['--for', '60s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'tick', 20_000, 'first tick');
  await typeLines(w.socket, ['Hello, my name is Ada and I collect fossil teeth.']);
  await agent.waitFor((e) => e.type === 'model.answer', 20_000, 'the answer');
  await stop(agent);
  const out = execFileSync(process.execPath, [MAIN, 'memory', 'ls', '--json', '--config', config], {
    env: { ...process.env, CORTEX_STATE_DIR: w.state },
    encoding: 'utf8',
  });
  const memories = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string; person: string; text: string });
  t.match(memories, [
    { kind: 'fact', person: 'Ada', text: 'my name is Ada' },
    { kind: 'fact', person: 'Ada', text: 'I collect fossil teeth' },
    { kind: 'summary', person: 'Ada', text: /^Visitor: Hello, my name is Ada and I collect fossil teeth\. Robot: / },
  ]);
});

t.test('a recorded run replays to the same passages; after a document changes, replay flags the changed retrieval', async (t) => {
  const { w, config } = setup();
  const file = w.file('run.mcap');
  const agent = startAgent(config, w.state, ['--record', file, '--for', '60s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  await agent.waitFor((e) => e.type === 'tick', 20_000, 'first tick');
  const asked = await ask(agent, w.socket, 'Where can I get a coffee?');
  t.match(asked.recall.used, [{ kind: 'knowledge', source: 'cafe.md' }]);
  await stop(agent);

  const replay = () =>
    spawnSync(process.execPath, [MAIN, 'replay', file], { env: { ...process.env, CORTEX_STATE_DIR: w.state }, encoding: 'utf8', timeout: 120_000 });
  const same = replay();
  t.equal(same.status, 0, `the same documents, the same decisions: ${same.stdout}${same.stderr}`);

  // The café moves its coffee to the whale's document: the turn now gets another passage.
  writeFileSync(w.file('docs/cafe.md'), '# Café\n\nThe café is closed for renovation.\n');
  writeFileSync(w.file('docs/whale.md'), '# Whale\n\nThe fin whale skeleton is 19 metres long. Coffee is sold next to it.\n');
  const changed = replay();
  t.equal(changed.status, 1, 'replay reports a difference');
  t.match(changed.stdout, /recall cafe\.md 1\.00\s+</, 'the recorded passage is shown on the recorded side');
  t.match(changed.stdout, />\s+\S*\s*recall whale\.md/, 'the passage the replay got on the replayed side');
});
