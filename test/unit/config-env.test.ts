// Proves ${VAR} and ${VAR:-default} substitution: POSIX defaults, .env under the process environment, unset required vs optional.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configEnvironment, substituteString } from '../../src/config/env.js';
import { loadConfig } from '../../src/config/load.js';
import { legacyConfig, loadObject, mode, tempDir, validConfig, writeConfig } from '../helpers/config-fixtures.js';

t.test('every string value, several references per string, inside modes and lists; never keys', async (t) => {
  const cfg = validConfig({
    system_governance: '${LAW_A} then ${LAW_B}, by ${WHO:-nobody}',
    modes: {
      guard: mode({ system_prompt_base: 'You are ${ROBOT}.', agent_inputs: [{ type: 'In', config: { '${KEY_NAME}': 'v', deep: ['${ROBOT}-1'] } }] }),
      rest: mode(),
    },
  });
  const r = await loadObject(t, cfg, { env: { LAW_A: 'one', LAW_B: 'two', ROBOT: 'Spot', KEY_NAME: 'nope' } });
  t.ok(r.ok);
  if (!r.ok) return;
  t.equal(r.loaded.config.system_governance, 'one then two, by nobody');
  t.equal(r.loaded.config.modes.guard!.system_prompt_base, 'You are Spot.');
  t.same(r.loaded.config.modes.guard!.agent_inputs[0]!.config, { '${KEY_NAME}': 'v', deep: ['Spot-1'] }, 'keys are left alone');
});

t.test('defaults follow POSIX :- (unset or empty uses the default); plain ${VAR} set-but-empty is empty', async (t) => {
  const env = { EMPTY: '', SET: 'value' };
  t.equal(substituteString('${UNSET:-dflt}', env).value, 'dflt');
  t.equal(substituteString('${EMPTY:-dflt}', env).value, 'dflt', 'empty-but-set takes the default');
  t.equal(substituteString('${SET:-dflt}', env).value, 'value');
  t.equal(substituteString('[${EMPTY}]', env).value, '[]', 'plain reference to an empty variable gives the empty string');
  t.equal(substituteString('${UNSET:-}', env).value, '', 'an empty default is allowed');
  t.equal(substituteString('${UNSET:-a b:c}', env).value, 'a b:c');
  t.equal(substituteString('cost $5 and $${HOME} and ${SET}', env).value, 'cost $5 and ${HOME} and value', '$${ is a literal ${');
  t.same(substituteString('${A}${B:-b}${C}', {}).unset, ['A', 'C']);
});

t.test('values stay strings: a substituted number field is reported, not coerced', async (t) => {
  const r = await loadObject(t, validConfig({ modes: { guard: mode({ hertz: '${HZ:-2}' }), rest: mode() } }));
  t.same(!r.ok && r.lines, ['modes.guard.hertz: expected a number, got "2"']);
});

t.test('an unset variable without default in a required field is an error naming it and the path', async (t) => {
  const r = await loadObject(
    t,
    validConfig({ system_governance: 'Laws: ${LAWS}', modes: { guard: mode({ system_prompt_base: '${P1}${P2}' }), rest: mode() } }),
  );
  t.notOk(r.ok);
  if (r.ok) return;
  t.same(r.lines.sort(), [
    'modes.guard.system_prompt_base: environment variables P1, P2 are not set and have no default: set them in .env or the environment, or write ${P1:-default}',
    'system_governance: environment variable LAWS is not set and has no default: set it in .env or the environment, or write ${LAWS:-default}',
  ]);
  t.ok(r.issues.every((i) => i.kind === 'env'));
  t.same(r.warnings, [], 'not also reported as an optional field');
});

t.test('an unset variable in an optional field is a warning and the field is left out', async (t) => {
  const r = await loadObject(t, validConfig({ cortex_llm: { type: 'SomeLLM', agent_name: '${AGENT_NAME}', config: { base_url: 'http://${LLM_HOST}/v1' } } }));
  t.ok(r.ok);
  if (!r.ok) return;
  t.equal(r.loaded.config.cortex_llm!.agent_name, undefined);
  t.notOk('agent_name' in r.loaded.config.cortex_llm!);
  t.notOk('base_url' in r.loaded.config.cortex_llm!.config);
  const w = r.warnings.map((x) => x.replace(/^[^:]+(:\d+:\d+)?: /, '')).sort();
  t.same(w, [
    'cortex_llm.agent_name: environment variable AGENT_NAME not set and no default; this optional field is left out',
    'cortex_llm.config.base_url: environment variable LLM_HOST not set and no default; this optional field is left out',
  ]);
});

t.test('an unset variable inside a list removes the whole list property', async (t) => {
  const optional = await loadObject(
    t,
    validConfig({
      modes: { guard: mode({ mcp_servers: [{ name: 'fs', transport: 'stdio', command: 'srv', args: ['--root', '${ROOT}'] }] }), rest: mode() },
    }),
  );
  t.ok(optional.ok);
  if (optional.ok) {
    t.same(optional.loaded.config.modes.guard!.mcp_servers[0]!.args, [], 'not ["--root"]: the list goes whole');
    t.match(optional.warnings.join('\n'), /modes\.guard\.mcp_servers\[0\]\.args: environment variable ROOT not set/);
  }
  const required = await loadObject(
    t,
    validConfig({
      transition_rules: [{ from_mode: 'guard', to_mode: 'rest', transition_type: 'input_triggered', trigger_keywords: ['rest', '${WORD}'], priority: 1 }],
    }),
  );
  t.same(!required.ok && required.lines, [
    'transition_rules[0].trigger_keywords: environment variable WORD is not set and has no default: set it in .env or the environment, or write ${WORD:-default}',
  ]);
});

t.test('an unset required field of a legacy file is named at the path the file uses', async (t) => {
  const r = await loadObject(t, legacyConfig({ system_prompt_base: '${PROMPT}' }));
  t.same(!r.ok && r.lines, [
    'system_prompt_base: environment variable PROMPT is not set and has no default: set it in .env or the environment, or write ${PROMPT:-default}',
  ]);
  t.same(!r.ok && r.warnings, []);
});

t.test('unterminated ${ and malformed names are errors at their path; other fields still checked', async (t) => {
  const r = await loadObject(
    t,
    validConfig({
      system_governance: 'abc ${OOPS',
      modes: { guard: mode({ description: '${1BAD}' }), rest: mode({ hertz: 'fast' }) },
    }),
  );
  t.notOk(r.ok);
  if (r.ok) return;
  t.same(r.lines.sort(), [
    'modes.guard.description: "${1BAD}" is not a valid variable reference (expected ${NAME} or ${NAME:-default})',
    'modes.rest.hertz: expected a number, got "fast"',
    'system_governance: unterminated "${" at character 5',
  ]);
});

t.test('the environment: .env beside the project (or CORTEX_ENV_FILE) under the process environment', async (t) => {
  const dir = tempDir(t);
  const envFile = join(dir, 'test.env');
  writeFileSync(envFile, 'FROM_FILE=file\nBOTH=file\nOM_API_KEY=key_test_fromdotenv\n');
  const env = configEnvironment({ CORTEX_ENV_FILE: envFile, BOTH: 'process', ONLY_PROCESS: 'p' });
  t.equal(env.FROM_FILE, 'file');
  t.equal(env.BOTH, 'process', 'the process environment wins');
  t.equal(env.ONLY_PROCESS, 'p');
  t.same(
    configEnvironment({ CORTEX_ENV_FILE: join(dir, 'missing.env'), X: '1' }),
    { CORTEX_ENV_FILE: join(dir, 'missing.env'), X: '1' },
    'a missing file is no error',
  );

  // loadConfig without an env option reads the same way from process.env.
  const before = { CORTEX_ENV_FILE: process.env.CORTEX_ENV_FILE, OM_API_KEY: process.env.OM_API_KEY };
  process.env.CORTEX_ENV_FILE = envFile;
  delete process.env.OM_API_KEY;
  t.teardown(() => {
    for (const [k, v] of Object.entries(before)) v === undefined ? delete process.env[k] : (process.env[k] = v);
  });
  const cfg = validConfig({ system_governance: '${FROM_FILE}' });
  delete cfg.api_key;
  const loaded = await loadConfig({ file: writeConfig(dir, 'envd', cfg) }, { plugins: false });
  t.equal(loaded.config.system_governance, 'file');
  t.equal(loaded.apiKey, 'key_test_fromdotenv', 'OM_API_KEY may come from .env');
});

t.test("CONFIG_DIR and STATE_DIR are built in: the file's directory and the state directory, unless the environment sets them", async (t) => {
  const { mkdtempSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { loadConfig } = await import('../../src/config/load.js');
  const { stateDir } = await import('../../src/paths.js');
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-builtin-'));
  const file = join(dir, 'a.json5');
  writeFileSync(
    file,
    `{ version: "v1.0.5", name: "a", api_key: "key_test_x", system_governance: "g", system_prompt_base: "p", hertz: 1,
       cortex_llm: { type: "CloudLLM" }, agent_inputs: [{ type: "TextInput", config: { source: "fifo", path: "\${CONFIG_DIR}/in.fifo" } }],
       agent_actions: [{ name: "speak", llm_label: "speak", connector: "console", config: { prefix: "\${STATE_DIR}" } }] }`,
  );
  const loaded = await loadConfig({ file }, { env: {} });
  const mode = loaded.config.modes.a!;
  t.equal(mode.agent_inputs[0]!.config.path, join(dir, 'in.fifo'), 'CONFIG_DIR is the directory of the file');
  t.equal(mode.agent_actions[0]!.config.prefix, stateDir(), 'STATE_DIR is the state directory');
  const overridden = await loadConfig({ file }, { env: { CONFIG_DIR: '/etc/elsewhere' } });
  t.equal(overridden.config.modes.a!.agent_inputs[0]!.config.path, '/etc/elsewhere/in.fifo', 'the environment wins');
});
