// A whole agent as a real process against the embedded local service: typed text -> prompt -> tool call -> console speak, keyword switches with hooks in order, SIGTERM.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { recorderScript, startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import type { AgentEvent } from '../../src/cortex/events.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

function companion(socket: string, record: string, log: string): string {
  const hook = (hook_type: string, word: string, extra = '') =>
    `{ hook_type: "${hook_type}", handler_type: "command", handler_config: { command: "${process.execPath} ${record} ${log} ${word}" }${extra} }`;
  const input = `[{ type: "TextInput", config: { source: "socket", path: "${socket}", descriptor: "Voice" } }]`;
  const actions = `[{ name: "speak", llm_label: "speak", connector: "console" }, { name: "face", llm_label: "emotion", connector: "console" }]`;
  return `{
    version: "v1.0.5", name: "t", default_mode: "idle", allow_manual_switching: true, mode_memory_enabled: true,
    api_key: "", system_governance: "obey", service: { base_url: "embedded" },
    cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini" } },
    global_lifecycle_hooks: [${hook('on_startup', 'startup')}, ${hook('on_shutdown', 'shutdown')}],
    modes: {
      idle: { display_name: "Idle", description: "d", system_prompt_base: "rest", hertz: 10, agent_inputs: ${input}, agent_actions: ${actions},
        lifecycle_hooks: [${hook('on_entry', 'entry:idle')}, ${hook('on_exit', 'exit:idle')}] },
      conversation: { display_name: "Conversation", description: "d", system_prompt_base: "talk", hertz: 10, agent_inputs: ${input}, agent_actions: ${actions},
        lifecycle_hooks: [${hook('on_entry', 'entry:conversation')}, ${hook('on_exit', 'exit:conversation')}, ${hook('on_entry', 'entry2:conversation', ', priority: -1')}] },
    },
    transition_rules: [
      { from_mode: "idle", to_mode: "conversation", transition_type: "input_triggered", trigger_keywords: ["let's talk"], priority: 1 },
    ],
  }`;
}

t.test(
  'typed text reaches the model and a spoken answer comes out; a keyword switches mode with hooks in order; SIGTERM runs shutdown hooks and exits 0',
  async (t) => {
    const w = workDir();
    const log = w.file('hooks.log');
    writeFileSync(log, '');
    const config = w.file('agent.json5');
    writeFileSync(config, companion(w.socket, recorderScript(w.dir), log));
    const agent = startAgent(config, w.state, ['--for', '60s']);
    t.teardown(() => void agent.child.kill('SIGKILL'));

    await agent.waitFor((e) => e.type === 'tick' && e.mode === 'idle', 10_000, 'first tick in idle');
    await typeLines(w.socket, ["let's talk"]);
    const changed = await agent.waitFor<Ev<'mode.changed'>>((e) => e.type === 'mode.changed', 10_000, 'mode.changed');
    t.match(changed, { from: 'idle', to: 'conversation', trigger: 'input_triggered' });
    t.notOk(
      agent.events.some((e) => e.type === 'model.answer'),
      'the tick with the keyword ended before the model',
    );

    await agent.waitFor((e) => e.type === 'tick' && e.mode === 'conversation', 10_000, 'tick in conversation');
    await typeLines(w.socket, ['what is your name']);
    const prompt = await agent.waitFor<Ev<'prompt'>>((e) => e.type === 'prompt', 10_000, 'prompt');
    t.match(prompt.prompt, /INPUT: Voice\n\/\/ START\nwhat is your name\n\/\/ END/);
    const answer = await agent.waitFor<Ev<'model.answer'>>((e) => e.type === 'model.answer', 10_000, 'model answer');
    t.same(answer.tool_calls, [{ name: 'speak', arguments: { sentence: 'I am a robot running cortexd.' } }]);
    const spoke = await agent.waitFor<Ev<'action'>>((e) => e.type === 'action' && e.label === 'speak' && e.state === 'done', 10_000, 'speak done');
    t.same(spoke.value, { sentence: 'I am a robot running cortexd.' });
    const input = agent.events.find((e) => e.type === 'input') as Ev<'input'>;
    t.match(input, { input: 'TextInput', text: "let's talk", final: true });

    agent.child.kill('SIGTERM');
    t.equal(await agent.exited, 0, 'exit 0 after SIGTERM');
    t.same(readFileSync(log, 'utf8').trim().split('\n'), [
      'startup',
      'entry:idle',
      'exit:idle',
      'entry:conversation',
      'entry2:conversation',
      'exit:conversation',
      'shutdown',
    ]);
    t.ok(agent.events.some((e) => e.type === 'agent.stopping' && e.reason === 'SIGTERM'));
    t.match(agent.events.at(-1), { type: 'agent.stopped', code: 0 });
    const ticks = agent.events.filter((e) => e.type === 'tick') as Array<Ev<'tick'>>;
    t.ok(ticks.filter((e) => e.called_model).length <= 2, 'idle ticks did not call the model');
  },
);

t.test('a start-up failure exits non-zero with one line', async (t) => {
  const w = workDir();
  const config = w.file('bad.json5');
  writeFileSync(
    config,
    `{ version: "v1.0.5", name: "bad", default_mode: "a", allow_manual_switching: false, mode_memory_enabled: false, api_key: "", system_governance: "",
       global_lifecycle_hooks: [{ hook_type: "on_startup", handler_type: "command", handler_config: { command: "false" }, on_failure: "abort" }],
       modes: { a: { display_name: "A", description: "d", system_prompt_base: "p", hertz: 1, cortex_llm: { type: "CloudLLM" } } } }`,
  );
  const agent = startAgent(config, w.state);
  t.equal(await agent.exited, 1);
  t.match(agent.stderr(), /cortexd: on_startup hook .*failed/);
});
