// Proves OM1's v1.1 file format read as its Go loader reads it: bare placeholders, duplicate keys, versions, wrapping, new keys.
import t from 'tap';
import { convertOm1 } from '../../src/compat/om1/convert.js';
import { duplicateKeys, expandBare, readOm1Text } from '../../src/compat/om1/read.js';

const V11 = (body: string) => `{
  version: "v1.1.0",
  name: "bot",
  "api_key": "\${OM_API_KEY:-openmind_free}",
  system_governance: "",
  system_prompt_base: "You are a dog.",
  cortex_llm: { type: "OpenAILLM", config: {} },
  ${body}
}`;

t.test('a placeholder outside quotes is expanded before parsing; an empty variable counts as unset', async (t) => {
  const text = V11('use_sim: ${USE_SIM:-false}, hertz: ${HZ:-2},');
  const unset = readOm1Text(text, {});
  t.equal(unset.raw.use_sim, false, 'use_sim: ${USE_SIM:-false} is the boolean false');
  t.equal(unset.raw.hertz, 2);
  t.equal(readOm1Text(text, { USE_SIM: '' }).raw.use_sim, false, 'empty is unset');
  t.equal(readOm1Text(text, { USE_SIM: 'true' }).raw.use_sim, true);
  t.match(unset.notes.join('\n'), /\$\{USE_SIM:-false\} -> false \(a placeholder outside quotes/);
  // Inside strings the placeholder stays for the native loader, which substitutes it the same way.
  t.equal(unset.raw.api_key, '${OM_API_KEY:-openmind_free}');
  t.equal(expandBare('{ a: "${X:-1}", /* ${Y:-2} */ b: ${Z:-3} }', {}, []), '{ a: "${X:-1}", /* ${Y:-2} */ b: 3 }');
});

t.test('quoted and bare keys; a key given twice keeps the last value and is named', async (t) => {
  const text = V11('use_tracer: { enabled: true }, "use_tracer": { enabled: false, quality_scorer: { enabled: true } },');
  const read = readOm1Text(text, {});
  t.same(read.raw.use_tracer, { enabled: false, quality_scorer: { enabled: true } }, 'the last one wins');
  t.match(read.notes.join('\n'), /use_tracer: given more than once; the last one is used/);
  t.same(duplicateKeys('{ modes: { a: { hertz: 1, hertz: 2 }, b: { hertz: 1 } }, x: [ { k: 1, k: 2 } ] }'), ['modes.a.hertz', 'x[0].k']);
});

t.test('__proto__, constructor and prototype keys are never honoured', async (t) => {
  const read = readOm1Text('{ "__proto__": { "polluted": true }, modes: { constructor: { hertz: 1 } }, name: "x" }', {});
  t.equal(Object.getPrototypeOf(read.raw), Object.prototype, 'the prototype is untouched');
  t.notOk('polluted' in read.raw);
  t.same(Object.keys(read.raw.modes as object), []);
  t.match(read.notes.join('\n'), /__proto__: ignored/);
  t.match(read.notes.join('\n'), /modes\.constructor: ignored/);
  t.equal(({} as Record<string, unknown>).polluted, undefined);
});

t.test('version rules as OM1 applies them', async (t) => {
  const v = (version: unknown) => convertOm1({ version, name: 'x', agent_inputs: [], agent_actions: [] });
  const v11 = v('v1.1.0');
  t.same([v11.refused, v11.warnings], [[], []]);
  t.equal(v11.config.version, 'v1.0.5', 'read as the latest native version');
  t.match(v11.translations.join('\n'), /version: v1\.1\.0 -> v1\.0\.5/);
  t.match(v('v2.0.0').refused.join('\n'), /incompatible with OM1's runtime v1\.1\.0: major version mismatch/);
  t.match(v('banana').refused.join('\n'), /is not a version/);
  t.match(v('v1.3.0').warnings.join('\n'), /another minor version may cause compatibility issues/);
  t.same(v('v1.3.0').refused, []);
  t.equal(v('v1.0').config.version, 'v1.0.0', "OM1's short forms");
  t.equal(v(undefined).config.version, 'v1.0.0', "no version: OM1's oldest format");
});

t.test('single mode: named after default_mode, then name, then "default"; hertz 1 by default', async (t) => {
  const base = { version: 'v1.1.0', agent_inputs: [], agent_actions: [] };
  t.equal(convertOm1({ ...base, default_mode: 'roam', name: 'bot' }).config.name, 'roam');
  t.equal(convertOm1({ ...base, name: 'bot' }).config.name, 'bot');
  const nameless = convertOm1(base);
  t.equal(nameless.config.name, 'default');
  t.equal(nameless.config.hertz, 1);
});

t.test('agent_backgrounds, global_backgrounds and the legacy backgrounds reach the background supervisor', async (t) => {
  const c = convertOm1({
    version: 'v1.1.0',
    name: 'x',
    unitree_ethernet: 'eth0',
    global_backgrounds: [{ type: 'ApproachingPerson' }],
    modes: {
      roam: { agent_backgrounds: [{ type: 'UnitreeGo2State' }], agent_inputs: [], agent_actions: [{ name: 'move', connector: 'unitree_sdk' }] },
      talk: { backgrounds: [{ type: 'UnitreeGo2State' }], agent_inputs: [], agent_actions: [] },
    },
  });
  t.same(c.missing, []);
  const modes = c.config.modes as Record<string, Record<string, unknown>>;
  t.same(
    (modes.roam!.backgrounds as Array<{ type: string }>).map((b) => b.type),
    ['PresenceInput', 'BodyInput'],
  );
  t.same(
    (modes.talk!.backgrounds as Array<{ type: string }>).map((b) => b.type),
    ['PresenceInput', 'BodyInput'],
  );
  t.notOk('agent_backgrounds' in modes.roam!);
  t.notOk('global_backgrounds' in c.config);
  t.match(c.translations.join('\n'), /global_backgrounds\[0\]\.type: ApproachingPerson \(background\) -> PresenceInput/);
  t.match(c.translations.join('\n'), /modes\.roam\.agent_backgrounds\[0\]\.type: UnitreeGo2State/);
});

t.test('per mode: defaults filled, timeout_seconds 0 dropped, action_execution_mode and action_dependencies kept', async (t) => {
  const c = convertOm1({
    version: 'v1.1.0',
    modes: {
      a: {
        name: 'a',
        timeout_seconds: 0,
        action_execution_mode: 'dependencies',
        action_dependencies: { speak: ['emotion'] },
        agent_inputs: [],
        agent_actions: [],
      },
      b: { timeout_seconds: 30, agent_inputs: [], agent_actions: [] },
    },
  });
  const modes = c.config.modes as Record<string, Record<string, unknown>>;
  t.same([modes.a!.display_name, modes.a!.description, modes.a!.hertz, 'timeout_seconds' in modes.a!, 'name' in modes.a!], ['a', '', 1, false, false]);
  t.equal(modes.b!.timeout_seconds, 30);
  t.same(modes.a!.action_dependencies, { speak: ['emotion'] });
  t.same([c.config.name, c.config.default_mode, c.config.allow_manual_switching], ['om1', 'a', false]);
});

t.test('use_sim, use_tracer, memory, knowledge_base and mcp_servers', async (t) => {
  const c = convertOm1({
    version: 'v1.1.0',
    name: 'x',
    use_sim: true,
    use_tracer: { enabled: true, quality_scorer: { enabled: true } },
    memory: { enabled: false },
    mcp_servers: [{ name: 'weather', command: 'npx', args: ['-y', 'weather'] }],
    agent_inputs: [],
    agent_actions: [],
  });
  t.ok(c.simulate, 'use_sim: true runs as --simulate');
  t.ok(c.tracer, 'use_tracer records the run');
  t.same(c.missing, []);
  t.same(c.config.mcp_servers, [{ name: 'weather', command: 'npx', args: ['-y', 'weather'], transport: 'stdio' }]);
  t.notOk('use_sim' in c.config);
  t.notOk('use_tracer' in c.config);
  t.match(c.translations.join('\n'), /memory: enabled: false -> the runtime's memory/, "memory goes to the runtime's memory store");
  t.match(c.translations.join('\n'), /quality_scorer: OM1's live conversation-quality scorer is not run/);
  t.match(c.translations.join('\n'), /allowlist/);
  const mem = convertOm1({ version: 'v1.1.0', name: 'x', memory: { enabled: true }, knowledge_base: { base_url: 'http://kb' } });
  t.same(mem.missing, [], "OM1's knowledge base is its local folder: carried out");
  t.match(mem.translations.join('\n'), /^knowledge_base\.base_url: "http:\/\/kb": OM1's embedding server is not called/m);
  t.notMatch(mem.missing.join('\n'), /^memory/m, 'memory is carried out');
  t.notOk(convertOm1({ version: 'v1.1.0', name: 'x', use_tracer: false }).tracer);
});

t.test("OM1's conversation-history input: the model keeps at least max_rounds rounds", async (t) => {
  const c = convertOm1({
    version: 'v1.1.0',
    name: 'x',
    cortex_llm: { type: 'OpenAILLM', config: { history_length: 0 } },
    modes: { greet: { agent_inputs: [{ type: 'ConversationHistoryInput', config: { max_rounds: 3 } }], agent_actions: [] } },
  });
  t.same(c.missing, []);
  const greet = (c.config.modes as Record<string, Record<string, unknown>>).greet!;
  t.same(greet.agent_inputs, []);
  t.match(greet.cortex_llm, { type: 'CloudLLM', config: { history_length: 3 } });
  t.match(c.config.cortex_llm, { type: 'CloudLLM', config: { history_length: 0 } }, "the file's model is unchanged for other modes");
  t.match(c.translations.join('\n'), /ConversationHistoryInput \{"max_rounds":3\} -> carried by the model's own history/);
});

t.test('memory.embedding_model is said and left out: memories are found by their words here', async (t) => {
  const { convertOm1 } = await import('../../src/compat/om1/convert.js');
  const c = convertOm1({
    version: 'v1.1.0',
    name: 'm',
    agent_inputs: [],
    agent_actions: [],
    cortex_llm: { type: 'OpenAILLM' },
    memory: { enabled: true, min_score: 0.3, embedding_model: 'text-embedding-3-small' },
  });
  t.same(c.config.memory, { enabled: true, min_score: 0.3 });
  t.same(c.missing, []);
  t.match(c.translations.join('\n'), /memory\.embedding_model: "text-embedding-3-small": not called: this runtime finds memories by their words/);
});
