// A whole agent in process with a scripted model: hook runs on the bus, save_interactions records, remember_locations tools and prompt, model options and stop, mode and tick in every log line.
import t, { type Test } from 'tap';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { Agent } from '../../actors/agent/agent.js';
import { AgentConfig, type LoadedConfig } from '../../src/config/schema.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import type { LlmAnswer, LlmRequest } from '../../src/cortex/llm.js';
import { createLogger } from '../../src/log.js';
import { builtinPlugins, resolvePlugins, withPlugins } from '../../actors/plugin-registry.js';
import type { LlmSpec } from '../../src/cortex/plugins.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;

interface Made {
  config: Record<string, unknown>;
  requests: LlmRequest[];
  stopped: boolean;
}
const made: Made[] = [];

/**
 * A model that reads the last user message: "remember X" saves place X at 1.5/2.5, "say hi" speaks and
 * calls an unknown tool, "fail" throws, anything else is answered with the text "ok". It joins the
 * built-in plugins in a registry of this test's own.
 */
const scripted: LlmSpec = {
  type: 'ScriptedLLM',
  description: 'test model',
  schema: z.looseObject({}),
  needs: () => [],
  create: (config) => {
    const m: Made = { config: config as Record<string, unknown>, requests: [], stopped: false };
    made.push(m);
    return {
      type: 'ScriptedLLM',
      async ask(request): Promise<LlmAnswer> {
        m.requests.push(request);
        const user = String(request.messages.findLast((x) => x.role === 'user')?.content ?? '');
        const place = /remember (\w+)/.exec(user)?.[1];
        if (place) return { toolCalls: [{ name: 'remember_location', arguments: { name: place, lat: 1.5, lon: 2.5 } }], model: 'scripted', latencyMs: 3 };
        if (/say hi/.test(user))
          return {
            toolCalls: [
              { name: 'speak', arguments: { sentence: 'hi' } },
              { name: 'fly', arguments: {} },
            ],
            model: 'scripted',
            latencyMs: 2,
          };
        if (/fail/.test(user)) throw new Error('model down');
        return { text: 'ok', toolCalls: [], model: 'scripted', latencyMs: 1 };
      },
      stop() {
        m.stopped = true;
      },
    };
  },
};
const registry = withPlugins(builtinPlugins, { llms: [scripted] });

const textIn = (dir: string, name: string) => [{ type: 'TextInput', config: { source: 'socket', path: join(dir, `${name}.sock`), descriptor: 'Voice' } }];
const speak = { name: 'speak', llm_label: 'speak', connector: 'console' };

function build(dir: string, modes: Record<string, Record<string, unknown>>, extra: Record<string, unknown> = {}) {
  const full: Record<string, unknown> = {};
  for (const [name, m] of Object.entries(modes)) {
    full[name] = {
      display_name: name,
      description: 'd',
      system_prompt_base: `you are in ${name}`,
      hertz: 20,
      agent_inputs: textIn(dir, name),
      agent_actions: [speak],
      ...m,
    };
  }
  const config = AgentConfig.parse({
    version: 'v1.0.5',
    name: 'wiring',
    default_mode: Object.keys(modes)[0],
    allow_manual_switching: true,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: 'obey',
    cortex_llm: { type: 'ScriptedLLM', config: {} },
    modes: full,
    ...extra,
  });
  return { file: 'x', configName: 'wiring', legacy: false, config, apiKey: '', addresses: {}, warnings: [] } as unknown as LoadedConfig;
}

/** Starts an agent with a JSON-line logger; `waitFor` resolves with the first bus event (since start) matching. */
async function run(t: Test, loaded: LoadedConfig, stateDir: string) {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger({ level: 'debug', pretty: false, destination: { write: (s: string) => void lines.push(JSON.parse(s)) } });
  const plugins = await resolvePlugins(registry, loaded.config);
  const agent = new Agent({ loaded, plugins, logger, stateDir, memory: false, shutdownBudgetMs: 2000, closeBudgetMs: 2000 });
  const events: AgentEvent[] = [];
  const waiters: Array<[(e: AgentEvent) => boolean, (e: AgentEvent) => void]> = [];
  agent.bus.events$.subscribe((e) => {
    events.push(e);
    for (const w of [...waiters]) if (w[0](e)) waiters.splice(waiters.indexOf(w), 1), w[1](e);
  });
  const waitFor = <T extends AgentEvent>(pred: (e: AgentEvent) => boolean, what: string, ms = 5000): Promise<T> =>
    new Promise((resolve, reject) => {
      const hit = events.find(pred);
      if (hit) return resolve(hit as T);
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      waiters.push([pred, (e) => (clearTimeout(timer), resolve(e as T))]);
    });
  /** Waits until the mode's loop runs, then types `text` into its TextInput. */
  const say = async (mode: string, text: string) => {
    await waitFor((e) => e.type === 'tick' && e.mode === mode && e.at >= 0, `a tick in ${mode}`);
    t.ok(agent.pushText(text), `typed "${text}"`);
  };
  t.teardown(() => agent.stop('teardown'));
  agent.start();
  return { agent, events, lines, waitFor, say };
}

t.test('every hook run is a hook event on the bus, ok or failed, with its duration', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-wiring-'));
  const hook = (hook_type: string, handler_type: string, handler_config: Record<string, unknown>, more = {}) => ({
    hook_type,
    handler_type,
    handler_config,
    ...more,
  });
  const loaded = build(
    dir,
    {
      a: {
        lifecycle_hooks: [
          hook('on_entry', 'action', { action: 'speak', value: { sentence: 'welcome' } }, { priority: 2 }),
          hook('on_entry', 'action', { action: 'nothing_here', value: 1 }, { priority: 1 }),
          hook('on_exit', 'message', { message: 'bye from {mode_name}' }),
        ],
      },
    },
    { global_lifecycle_hooks: [hook('on_startup', 'message', { message: 'starting' }), hook('on_shutdown', 'message', { message: 'down' })] },
  );
  const a = await run(t, loaded, join(dir, 'state'));
  await a.waitFor((e) => e.type === 'tick', 'first tick');
  a.agent.stop('test over');
  await a.agent.done;
  const hooks = a.events.filter((e): e is Ev<'hook'> => e.type === 'hook');
  t.same(
    hooks.map((h) => [h.hook_type, h.ok]),
    [
      ['on_startup', true],
      ['on_entry', true],
      ['on_entry', false],
      ['on_exit', true],
      ['on_shutdown', true],
    ],
  );
  t.match(hooks[2], { mode: 'a', handler_type: /^action/, error: /no action "nothing_here"/ });
  for (const h of hooks) t.type(h.duration_ms, 'number', `${h.hook_type} has a duration`);
});

t.test('save_interactions: one JSON line per tick that called the model (prompt, answer, what became of each call); none from other modes', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-wiring-'));
  const state = join(dir, 'state');
  const loaded = build(dir, { talk: { save_interactions: true }, quiet: {} });
  const a = await run(t, loaded, state);
  await a.say('talk', 'please say hi');
  await a.waitFor((e) => e.type === 'action' && e.label === 'speak' && e.state === 'done', 'speak done');
  await a.say('talk', 'now fail');
  await a.waitFor((e) => e.type === 'model.error', 'model error');
  t.same(await a.agent.switchMode('quiet', 'test'), { ok: true });
  await a.say('quiet', 'say hi quietly');
  await a.waitFor((e) => e.type === 'model.answer' && e.mode === 'quiet', 'answer in quiet');
  a.agent.stop('test over');
  await a.agent.done;

  const file = join(state, 'interactions', 'wiring.jsonl');
  const records = readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  t.equal(records.length, 2, 'two ticks of talk called the model; quiet saves nothing');
  const [hi, failed] = records;
  const prompt = a.events.find((e): e is Ev<'prompt'> => e.type === 'prompt' && e.mode === 'talk')!;
  t.match(hi, { mode: 'talk', tick: prompt.tick, prompt: prompt.prompt, at: /^\d{4}-\d\d-\d\dT/ });
  t.match(hi.prompt, /please say hi/);
  t.same(hi.answer, {
    model: 'scripted',
    tool_calls: [
      { name: 'speak', arguments: { sentence: 'hi' } },
      { name: 'fly', arguments: {} },
    ],
    latency_ms: 2,
  });
  t.match(hi.actions, [
    { label: 'speak', value: { sentence: 'hi' }, state: /queued|running/ },
    { label: 'fly', state: 'dropped', error: 'unknown tool' },
  ]);
  t.match(failed, { mode: 'talk', answer: { tool_calls: [], error: /model down/ }, actions: [] });
  t.match(failed.prompt, /now fail/);
});

t.test('remember_locations: the mode gets remember_location as a tool and the known places in its prompt; other modes do not', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-wiring-'));
  const state = join(dir, 'state');
  const loaded = build(dir, { explore: { remember_locations: true }, plain: {} });
  const a = await run(t, loaded, state);
  await a.say('explore', 'remember kitchen');
  const saved = await a.waitFor<Ev<'action'>>(
    (e) => e.type === 'action' && e.label === 'remember_location' && (e.state === 'done' || e.state === 'failed'),
    'remember_location',
  );
  t.equal(saved.state, 'done', saved.error ?? '');
  const file = JSON.parse(readFileSync(join(state, 'locations.json'), 'utf8'));
  t.match(file.locations.kitchen, { lat: 1.5, lon: 2.5 });
  const first = made.at(-1)!.requests[0]!;
  t.ok(
    first.tools.some((x) => x.function.name === 'remember_location'),
    'offered as a tool',
  );
  t.match(String(first.messages[0]!.content), /- remember_location: remember the place/, 'described among the actions');
  t.notMatch(String(first.messages[0]!.content), /Known places/, 'nothing saved yet');

  await a.say('explore', 'hello again');
  await a.waitFor((e) => e.type === 'model.answer' && e.mode === 'explore' && e.text === 'ok', 'second answer');
  const second = made.at(-1)!.requests.at(-1)!;
  t.match(String(second.messages[0]!.content), /Known places: kitchen \(1\.500000, 2\.500000\)/, 'the saved place is in the system prompt');

  t.same(await a.agent.switchMode('plain', 'test'), { ok: true });
  await a.say('plain', 'hello plain');
  await a.waitFor((e) => e.type === 'model.answer' && e.mode === 'plain', 'answer in plain');
  const plain = made.at(-1)!.requests.at(-1)!;
  t.notOk(plain.tools.some((x) => x.function.name === 'remember_location'));
  t.notMatch(String(plain.messages[0]!.content), /Known places/);
});

t.test('model plugins get history_length/agent_name from the entry (config wins) and are stopped with their mode', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-wiring-'));
  const loaded = build(dir, {
    first: { cortex_llm: { type: 'ScriptedLLM', history_length: 4, agent_name: 'Bits', config: { skip_idle: true } } },
    second: { cortex_llm: { type: 'ScriptedLLM', history_length: 4, config: { history_length: 1 } } },
  });
  const before = made.length;
  const a = await run(t, loaded, join(dir, 'state'));
  await a.waitFor((e) => e.type === 'tick' && e.mode === 'first', 'tick in first');
  const first = made[before]!;
  t.same(first.config, { history_length: 4, agent_name: 'Bits', skip_idle: true });
  t.same(await a.agent.switchMode('second', 'test'), { ok: true });
  await a.waitFor((e) => e.type === 'tick' && e.mode === 'second', 'tick in second');
  t.ok(first.stopped, 'the first mode stopped its model');
  const second = made[before + 1]!;
  t.same(second.config, { history_length: 1 }, 'config wins over the entry');
  t.notOk(second.stopped);
  a.agent.stop('test over');
  await a.agent.done;
  t.ok(second.stopped, 'stopping the agent stops the current model');
});

t.test('every log line of a running mode names the mode; lines of a tick name the tick', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-wiring-'));
  const loaded = build(dir, { m: { lifecycle_hooks: [{ hook_type: 'on_entry', handler_type: 'action', handler_config: { action: 'wave', value: 1 } }] } });
  const a = await run(t, loaded, join(dir, 'state'));
  await a.say('m', 'please say hi');
  await a.waitFor((e) => e.type === 'error' && /unknown tool "fly"/.test(e.message), 'unknown tool reported');
  await a.say('m', 'fail now');
  const error = await a.waitFor<Ev<'model.error'>>((e) => e.type === 'model.error', 'model error');
  a.agent.stop('test over');
  await a.agent.done;
  const failed = a.lines.find((l) => /model call failed: model down/.test(String(l.msg)));
  t.match(failed, { mode: 'm', tick: error.tick, level: 40 });
  const unknown = a.lines.find((l) => /unknown tool "fly"/.test(String(l.msg)));
  t.match(unknown, { mode: 'm', tick: Number });
  t.ok(
    a.lines.some((l) => /on_entry hook action "wave" of mode "m" failed/.test(String(l.msg)) && l.mode === 'm' && l.hook === 'on_entry'),
    'hook lines too',
  );
  t.ok(a.lines.length >= 3);
  for (const l of a.lines) t.equal(typeof l.mode, 'string', `"${String(l.msg)}" names the mode`);
  t.notOk(existsSync(join(dir, 'state', 'interactions')), 'no interactions without save_interactions');
});

t.test('a corrupt locations.json leaves the places out of the prompt with a warning; the tick still calls the model', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-wiring-'));
  const state = join(dir, 'state');
  mkdirSync(state, { recursive: true });
  writeFileSync(join(state, 'locations.json'), '{ not json');
  const a = await run(t, build(dir, { explore: { remember_locations: true } }), state);
  await a.say('explore', 'hello');
  await a.waitFor((e) => e.type === 'model.answer', 'answer');
  t.ok(a.lines.some((l) => /prompt context left out: .*locations\.json is not JSON/.test(String(l.msg)) && typeof l.tick === 'number'));
});

t.test('text typed while a mode is entering (its on_entry hooks run) waits and reaches the mode once its inputs start', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-wiring-'));
  // The entry hook runs until the test has typed, so the text is certainly typed before the inputs start.
  const gate = join(dir, 'typed');
  const waitGate = `${process.execPath} -e "const fs=require('fs');const t=setInterval(()=>{if(fs.existsSync('${gate}')){clearInterval(t)}},10)"`;
  const loaded = build(dir, {
    a: { lifecycle_hooks: [{ hook_type: 'on_entry', handler_type: 'command', handler_config: { command: waitGate }, timeout_seconds: 10 }] },
  });
  const a = await run(t, loaded, join(dir, 'state'));
  t.notOk(
    a.events.some((e) => e.type === 'tick'),
    'no tick yet: the entry hook is still running',
  );
  t.ok(a.agent.pushText('hello while entering'), 'accepted although the inputs have not started');
  writeFileSync(gate, '');
  const heard = await a.waitFor<Ev<'input'>>((e) => e.type === 'input' && e.text === 'hello while entering', 'the typed text as input', 10_000);
  t.equal(heard.mode, 'a');
});

t.test(
  'a typed keyword switches through the tick: the mode machine answers the offer, the tick skips the model, the handle follows the mode by events',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cortexd-wiring-'));
    const loaded = build(
      dir,
      { a: {}, b: {} },
      {
        transition_rules: [{ from_mode: 'a', to_mode: 'b', transition_type: 'input_triggered', trigger_keywords: ['go to b'], priority: 1 }],
      },
    );
    const a = await run(t, loaded, join(dir, 'state'));
    t.equal(a.agent.currentMode(), 'a');
    await a.say('a', 'please go to b now');
    const changed = await a.waitFor<Ev<'mode.changed'>>((e) => e.type === 'mode.changed' && e.to === 'b', 'the switch to b');
    t.match(changed, { from: 'a', to: 'b', trigger: 'input_triggered', reason: 'keyword "go to b"' });
    t.equal(a.agent.currentMode(), 'b', 'currentMode() follows mode.changed');
    await a.waitFor((e) => e.type === 'tick' && e.mode === 'b', 'a tick in b');
    const heard = a.events.findIndex((e) => e.type === 'input' && e.text === 'please go to b now');
    const asked = a.events.slice(heard).filter((e) => e.type === 'prompt' && e.mode === 'a');
    t.same(asked, [], 'the tick that offered the keyword did not ask the model');
    t.ok(a.agent.ready, 'ready once b runs (mode.ready)');
    const left = new Promise<void>((resolve) => {
      const sub = a.agent.bus.events$.subscribe((e) => e.type === 'agent.stopped' && (sub.unsubscribe(), resolve()));
    });
    a.agent.stop('done');
    await left;
    t.notOk(a.agent.ready, 'not ready once the agent stopped');
  },
);
