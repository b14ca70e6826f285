// Proves how a configuration is found (CONFIG, NAME, CORTEX_CONFIG_DIR, --config), parsed, defaulted, keyed and its plugin types resolved.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig, resolveTarget } from '../../src/config/load.js';
import { ConfigError } from '../../src/errors.js';
import { descriptors } from '../../src/plugins/index.js';
import { legacyConfig, loadObject, mode, tempDir, tryLoad, validConfig, writeConfig } from '../helpers/config-fixtures.js';

const { actions, inputs, llms, simulators } = descriptors;

/** Sets process variables for one test and puts them back after it. */
function withEnv(t: { teardown: (fn: () => void) => void }, vars: Record<string, string | undefined>) {
  const before = Object.fromEntries(Object.keys(vars).map((k) => [k, process.env[k]]));
  for (const [k, v] of Object.entries(vars)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  t.teardown(() => {
    for (const [k, v] of Object.entries(before)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  });
}

const knownList = (names: string[]) => (names.length ? names.join(', ') : '(none registered yet)');

t.test('names: NAME and CONFIG pick <CORTEX_CONFIG_DIR>/<name>.json5, --config takes a path', async (t) => {
  const dir = tempDir(t);
  writeConfig(dir, 'spot', validConfig({ name: 'from-name' }));
  const other = writeConfig(tempDir(t), 'elsewhere', validConfig({ name: 'from-path' }));
  withEnv(t, { CORTEX_CONFIG_DIR: dir, CONFIG: undefined });

  t.equal(resolveTarget({ name: 'spot' }).file, join(dir, 'spot.json5'));
  t.equal(resolveTarget({ name: 'spot.json5' }).file, join(dir, 'spot.json5'), 'a trailing .json5 is accepted');
  const byName = await loadConfig({ name: 'spot' }, { plugins: false, env: {} });
  t.equal(byName.config.name, 'from-name');
  t.equal(byName.configName, 'spot');

  process.env.CONFIG = 'spot';
  const byEnv = await loadConfig({}, { plugins: false, env: {} });
  t.equal(byEnv.file, join(dir, 'spot.json5'), 'CONFIG names the file when no NAME is given');

  const byPath = await loadConfig({ file: other }, { plugins: false, env: {} });
  t.equal(byPath.config.name, 'from-path');
  t.equal(byPath.configName, 'elsewhere', 'the config name of a path is its base name');
});

t.test('a path goes where a name goes; a name with .. but no slash is refused; no name at all is explained', async (t) => {
  const dir = tempDir(t);
  withEnv(t, { CORTEX_CONFIG_DIR: dir, CONFIG: undefined });
  // As OM1's loader reads them: absolute, or with a directory in it, is a path (relative to the working directory).
  t.equal(resolveTarget({ name: '/abs/robot.json5' }).file, '/abs/robot.json5');
  t.same(resolveTarget({ name: 'a/b.json5' }), { file: resolve('a/b.json5'), configName: 'b' });
  t.equal(resolveTarget({ name: '../etc/passwd' }).file, resolve('../etc/passwd'), 'a path like any other: reading it is the file check');
  // A bare NAME.json5 is the file in the working directory when there is one, else config/NAME.json5.
  const work = tempDir(t);
  const here = join(work, 'here.json5');
  writeFileSync(here, '{}');
  t.equal(resolveTarget({ name: 'here.json5' }).file, join(dir, 'here.json5'), 'no file of that name in the working directory: config/');
  const cwd = process.cwd();
  process.chdir(work);
  t.teardown(() => process.chdir(cwd));
  t.equal(resolveTarget({ name: 'here.json5' }).file, here, 'a file of that name in the working directory: that file');
  for (const bad of ['..', 'x..y', '']) {
    const err = t.throws(() => resolveTarget({ name: bad })) as unknown;
    if (bad === '') {
      t.match((err as ConfigError).message, /no configuration named: pass NAME, --config PATH, or set CONFIG/);
    } else {
      t.ok(err instanceof ConfigError, `${bad} refused`);
      t.match((err as ConfigError).message, /not a configuration name/);
    }
  }
});

t.test('a missing file, a directory and a non-object top level are one clear problem each', async (t) => {
  const dir = tempDir(t);
  const missing = await tryLoad(join(dir, 'nope.json5'));
  t.same(!missing.ok && missing.lines, ['file not found']);
  const isDir = await tryLoad(dir);
  t.same(!isDir.ok && isDir.lines, ['is a directory, not a file']);
  for (const [text, got] of [
    ['[1, 2]', 'a list'],
    ['42', '42'],
    ['null', 'null'],
    ['"x"', '"x"'],
  ] as const) {
    const r = await tryLoad(writeConfig(dir, 'top', text));
    t.same(!r.ok && r.lines, [`the top level must be an object, got ${got}`], text);
  }
});

t.test('JSON5 syntax errors name the file, line and column', async (t) => {
  const dir = tempDir(t);
  const file = writeConfig(dir, 'broken', '{\n  version: "v1.0.5",\n  name: "x",\n  hertz: 1 2,\n}\n');
  const r = await tryLoad(file);
  t.notOk(r.ok);
  if (r.ok) return;
  t.equal(r.issues.length, 1);
  t.equal(r.issues[0]!.file, file, 'the file as displayed (absolute outside the working directory)');
  t.equal(r.issues[0]!.kind, 'parse');
  // The fix where it goes (after the 1 of line 4), then the parser's own words.
  t.match(r.issues[0], { line: 4, column: 11 });
  t.match(r.issues[0]!.message, /^a comma is missing here: .* \(the JSON5 parser stopped at line 4, column 12: invalid character '2'\)$/);
  const eof = await tryLoad(writeConfig(dir, 'eof', '{ version: "v1.0.5",'));
  t.match(!eof.ok && eof.issues[0], {
    line: 1,
    column: 1,
    message: /^the \{ \(an object\) that opens here is never closed: add a \} where it ends .*invalid end of input\)$/,
  });
  const str = await tryLoad(writeConfig(dir, 'str', '{\n  name: "unterminated\n}'));
  t.match(
    !str.ok && str.issues[0],
    { line: 2, column: 9, message: /^the text in quotes that starts here is not closed: add the closing " at its end/ },
    'a line break inside a string',
  );
  const e = t.throws(() => {
    throw new ConfigError((r as { issues: ConfigError['issues'] }).issues);
  }) as ConfigError;
  t.match(e.message, `${file}:4:11: a comma is missing here`, 'printed as file:line:column: message');
});

t.test('multi-mode defaults: name, top-level hertz and prompt optional, mode fields defaulted', async (t) => {
  const cfg = validConfig();
  delete cfg.name;
  const r = await loadObject(t, cfg, {}, 'patrol');
  t.ok(r.ok);
  if (!r.ok) return;
  const { config } = r.loaded;
  t.equal(config.name, 'patrol', 'name defaults to the config name');
  t.equal(config.hertz, undefined);
  t.equal(config.system_prompt_base, '');
  t.equal(config.system_prompt_examples, '');
  const guard = config.modes.guard!;
  t.equal(guard.timeout_seconds, undefined, 'no timeout unless given');
  t.equal(guard.remember_locations, false);
  t.equal(guard.save_interactions, false);
  t.same([guard.agent_inputs, guard.agent_actions, guard.lifecycle_hooks, guard.simulators, guard.mcp_servers], [[], [], [], [], []]);
  t.same(config.global_lifecycle_hooks, []);
  t.equal(r.loaded.legacy, false);
  t.same(r.warnings, [], 'a clean file gives no warnings');
});

t.test('the global cortex_llm fills modes without one; a mode model replaces it whole; neither is an error', async (t) => {
  const own = { type: 'LocalLLM', config: { base_url: 'http://127.0.0.1:11434/v1' } };
  const r = await loadObject(t, validConfig({ modes: { guard: mode(), rest: mode({ cortex_llm: own }) } }));
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.loaded.config.modes.guard!.cortex_llm, { type: 'SomeLLM', config: { history_length: 5 } });
  t.same(r.loaded.config.modes.rest!.cortex_llm, own, 'no history_length merged in from the global model');

  const none = validConfig({ modes: { guard: mode(), rest: mode({ cortex_llm: own }) } });
  delete none.cortex_llm;
  const n = await loadObject(t, none);
  t.same(!n.ok && n.lines, ['modes.guard.cortex_llm: missing, and there is no global cortex_llm to use instead']);
});

t.test('unknown fields are problems at every level, each named: nothing is silently ignored', async (t) => {
  const cfg = validConfig({
    robot_colour: 'red',
    modes: { guard: mode({ vibe: 'calm', agent_inputs: [{ type: 'X', extra_in: 1, config: { anything: true } }] }), rest: mode() },
    cortex_llm: { type: 'SomeLLM', config: { custom_knob: 3 } },
  });
  const r = await loadObject(t, cfg, { plugins: false });
  t.notOk(r.ok);
  if (r.ok) return;
  const unknown = 'unknown field: this runtime does not carry it out (remove it; `cortexd schema` lists the fields it reads; an OM1 file runs with --om1)';
  t.same(r.lines.filter((l) => l.includes('unknown field')).sort(), [
    `modes.guard.agent_inputs[0].extra_in: ${unknown}`,
    `modes.guard.vibe: ${unknown}`,
    `robot_colour: ${unknown}`,
  ]);
});

t.test("a plugin's unknown option is a problem naming it", async (t) => {
  const cfg = validConfig({ modes: { guard: mode({ agent_inputs: [{ type: 'TextInput', config: { colour: 'red' } }] }), rest: mode() } });
  const r = await loadObject(t, cfg, { plugins: true });
  t.notOk(r.ok);
  if (r.ok) return;
  t.same(
    r.lines.filter((l) => l.includes('colour')),
    ["modes.guard.agent_inputs[0].config.colour: unknown field: this plugin does not carry it out (remove it; `cortexd schema` lists each plugin's options)"],
  );
});

t.test('$schema is a known top-level field: editors validate with it, the loader neither warns nor uses it', async (t) => {
  const multi = await loadObject(t, validConfig({ $schema: './schema.json' }));
  t.ok(multi.ok);
  if (!multi.ok) return;
  t.same(multi.warnings, [], 'no unknown-field warning');
  const r = await loadObject(t, legacyConfig({ $schema: './schema.json' }));
  t.ok(r.ok, 'a legacy single-mode file takes it too');
  if (r.ok) t.same(r.warnings, []);
  const bad = await loadObject(t, validConfig({ $schema: 7 }));
  t.notOk(bad.ok, 'it must be a string');
  if (!bad.ok) t.match(bad.lines.join('\n'), /\$schema: expected a string/);
});

t.test('API key: the file wins, else OM_API_KEY; a placeholder gives exactly one warning', async (t) => {
  const hosted = { service: { base_url: 'https://api.example.com' } };
  const fromFile = await loadObject(t, validConfig({ ...hosted, api_key: 'key_live_fromfile1' }), { env: { OM_API_KEY: 'key_live_fromenv1' } });
  t.equal(fromFile.ok && fromFile.loaded.apiKey, 'key_live_fromfile1');
  t.same(fromFile.warnings, []);

  const noKey = validConfig(hosted);
  delete noKey.api_key;
  const fromEnv = await loadObject(t, noKey, { env: { OM_API_KEY: 'key_test_fromenv2' } });
  t.equal(fromEnv.ok && fromEnv.loaded.apiKey, 'key_test_fromenv2');
  t.same(fromEnv.warnings, []);

  const missing = await loadObject(t, noKey);
  t.same(!missing.ok && missing.lines, ['api_key: missing: set api_key in the file or the OM_API_KEY environment variable']);

  for (const [value, env, expect] of [
    ['openmind_free', {}, /api_key: placeholder API key "openmind_free": calls to the hosted service will fail/],
    ['my-own-key', {}, /api_key: placeholder API key \(no key_live_\/key_test_ prefix\): calls to the hosted service will fail/],
    ['${OM_API_KEY:-openmind_free}', {}, /placeholder API key "openmind_free"/],
    ['', {}, /api_key: no API key: calls to the hosted service will fail/],
  ] as const) {
    const r = await loadObject(t, validConfig({ ...hosted, api_key: value }), { env });
    t.ok(r.ok, `${value} loads`);
    const keyWarnings = r.warnings.filter((w) => /API key/.test(w));
    t.equal(keyWarnings.length, 1, `one warning for ${JSON.stringify(value)}`);
    t.match(keyWarnings[0], expect);
    t.notMatch(keyWarnings[0], /my-own-key/, 'the key itself is never printed');
  }
});

t.test('plugin types resolve through the registries; unknown ones list the known names', async (t) => {
  const cfg = validConfig({
    cortex_llm: { type: 'NoSuchLLM' },
    modes: {
      guard: mode({
        agent_inputs: [{ type: 'NoSuchInput' }],
        agent_actions: [{ name: 'no_such_action', llm_label: 'x', connector: 'c' }],
        simulators: [{ type: 'NoSuchSim' }],
      }),
      rest: mode({ cortex_llm: { type: 'AlsoNoSuchLLM' } }),
    },
  });
  const r = await loadObject(t, cfg, { plugins: true });
  t.notOk(r.ok);
  if (r.ok) return;
  t.ok(
    r.issues.every((i) => i.kind === 'unknown_type'),
    'every problem is an unknown type',
  );
  t.same(
    r.lines.sort(),
    [
      `cortex_llm.type: unknown llm type "NoSuchLLM"; known: ${knownList(llms.names())}`,
      `modes.guard.agent_actions[0].name: unknown action type "no_such_action"; known: ${knownList(actions.names())}`,
      `modes.guard.agent_inputs[0].type: unknown input type "NoSuchInput"; known: ${knownList(inputs.names())}`,
      `modes.guard.simulators[0].type: unknown simulator type "NoSuchSim"; known: ${knownList(simulators.names())}`,
      `modes.rest.cortex_llm.type: unknown llm type "AlsoNoSuchLLM"; known: ${knownList(llms.names())}`,
    ].sort(),
  );
  const plain = await loadObject(t, cfg, { plugins: false });
  t.ok(plain.ok, 'the same file is valid when plugin types are not resolved');
});

t.test('an unknown connector of a known action lists that action’s connectors', async (t) => {
  const action = actions.all()[0]!;
  const cfg = validConfig({ modes: { guard: mode({ agent_actions: [{ name: action.type, llm_label: 'x', connector: 'no_such_connector' }] }), rest: mode() } });
  const r = await loadObject(t, cfg, { plugins: true });
  t.notOk(r.ok);
  if (r.ok) return;
  const line = r.lines.find((l) => l.startsWith('modes.guard.agent_actions[0].connector: '));
  t.equal(line, `modes.guard.agent_actions[0].connector: unknown connector type "no_such_connector"; known: ${knownList(action.connectors.names())}`);
});
