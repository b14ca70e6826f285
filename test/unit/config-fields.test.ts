// Proves the typed field families (hooks, rules, conditions, MCP servers, actions) and the whole-file cross-checks.
import t from 'tap';
import { loadObject, mode, validConfig } from '../helpers/config-fixtures.js';

const rule = (extra: Record<string, unknown> = {}) => ({
  from_mode: 'guard',
  to_mode: 'rest',
  transition_type: 'input_triggered',
  trigger_keywords: ['rest'],
  priority: 1,
  ...extra,
});
const withGuard = (extra: Record<string, unknown>) => validConfig({ modes: { guard: mode(extra), rest: mode() } });

t.test('lifecycle hooks: enums, defaults, and the handler_config field each handler needs', async (t) => {
  const ok = await loadObject(
    t,
    withGuard({
      lifecycle_hooks: [
        { hook_type: 'on_entry', handler_type: 'message', handler_config: { message: 'hi' } },
        {
          hook_type: 'on_exit',
          handler_type: 'command',
          handler_config: { command: 'echo bye' },
          priority: 3,
          async_execution: true,
          timeout_seconds: 1.5,
          on_failure: 'abort',
        },
        { hook_type: 'on_timeout', handler_type: 'function', handler_config: { function: 'mod.fn' } },
        { hook_type: 'on_entry', handler_type: 'action', handler_config: { action_type: 'speak', action_config: { text: 'x' } } },
      ],
    }),
  );
  t.ok(ok.ok);
  if (ok.ok) {
    const [first, second] = ok.loaded.config.modes.guard!.lifecycle_hooks;
    t.same(
      { p: first!.priority, a: first!.async_execution, to: first!.timeout_seconds, f: first!.on_failure },
      { p: 0, a: false, to: 5, f: 'log' },
      'defaults',
    );
    t.same({ p: second!.priority, a: second!.async_execution, to: second!.timeout_seconds, f: second!.on_failure }, { p: 3, a: true, to: 1.5, f: 'abort' });
  }
  const bad = await loadObject(
    t,
    withGuard({
      lifecycle_hooks: [
        { hook_type: 'on_entry', handler_type: 'message', handler_config: {} },
        { hook_type: 'on_entry', handler_type: 'command', handler_config: { message: 'not a command' } },
        { hook_type: 'on_entry', handler_type: 'function', handler_config: { function: '' } },
        { hook_type: 'on_entry', handler_type: 'action', handler_config: {} },
        { hook_type: 'on_boot', handler_type: 'message', handler_config: { message: 'x' } },
        { hook_type: 'on_entry', handler_type: 'email', handler_config: { message: 'x' } },
        { hook_type: 'on_entry', handler_type: 'message', handler_config: { message: 'x' }, on_failure: 'retry', priority: 1.5 },
      ],
    }),
  );
  t.notOk(bad.ok);
  if (bad.ok) return;
  const at = 'modes.guard.lifecycle_hooks';
  t.same(
    bad.lines.sort(),
    [
      `${at}[0].handler_config.message: a message handler needs handler_config.message (a non-empty string)`,
      `${at}[1].handler_config.command: a command handler needs handler_config.command (a non-empty string)`,
      `${at}[2].handler_config.function: a function handler needs handler_config.function (a non-empty string)`,
      `${at}[3].handler_config.action: a action handler needs handler_config.action (a non-empty string)`,
      `${at}[4].hook_type: expected one of "on_startup", "on_shutdown", "on_entry", "on_exit", "on_timeout", got "on_boot"`,
      `${at}[5].handler_type: expected one of "message", "command", "function", "action", got "email"`,
      `${at}[6].on_failure: expected one of "log", "ignore", "abort", got "retry"`,
      `${at}[6].priority: expected an integer, got 1.5`,
    ].sort(),
  );
});

t.test('global hooks: only on_startup and on_shutdown', async (t) => {
  const ok = await loadObject(
    t,
    validConfig({
      global_lifecycle_hooks: [
        { hook_type: 'on_startup', handler_type: 'message', handler_config: { message: 'up' } },
        { hook_type: 'on_shutdown', handler_type: 'command', handler_config: { command: 'true' } },
      ],
    }),
  );
  t.ok(ok.ok);
  const bad = await loadObject(
    t,
    validConfig({ global_lifecycle_hooks: [{ hook_type: 'on_entry', handler_type: 'message', handler_config: { message: 'x' } }] }),
  );
  t.same(!bad.ok && bad.lines, [
    "global_lifecycle_hooks[0].hook_type: global hooks run at start and stop only (on_startup, on_shutdown); put on_entry hooks in a mode's lifecycle_hooks",
  ]);
});

t.test('transition rules: "*" as source, defaults, and what each type needs', async (t) => {
  const ok = await loadObject(
    t,
    validConfig({
      transition_rules: [
        rule({ from_mode: '*', cooldown_seconds: 2.5 }),
        { from_mode: 'rest', to_mode: 'guard', transition_type: 'time_based', timeout_seconds: 60, priority: 0 },
        { from_mode: 'rest', to_mode: 'guard', transition_type: 'context_aware', context_conditions: { battery: { min: 20 } }, priority: 2 },
        { from_mode: '*', to_mode: 'guard', transition_type: 'manual', priority: 0 },
      ],
    }),
  );
  t.ok(ok.ok);
  if (ok.ok) {
    const rules = ok.loaded.config.transition_rules;
    t.equal(rules[0]!.from_mode, '*');
    t.equal(rules[0]!.cooldown_seconds, 2.5);
    t.same(rules[1]!.trigger_keywords, [], 'keywords default to none for other types');
  }
  const bad = await loadObject(
    t,
    validConfig({
      transition_rules: [
        rule({ trigger_keywords: [] }),
        rule({ trigger_keywords: ['ok', ''] }),
        rule({ transition_type: 'context_aware', trigger_keywords: [] }),
        rule({ transition_type: 'teleport' }),
        rule({ priority: 'high', cooldown_seconds: -1 }),
      ],
    }),
  );
  t.notOk(bad.ok);
  if (bad.ok) return;
  t.same(
    bad.lines.sort(),
    [
      'transition_rules[0].trigger_keywords: an input_triggered rule needs at least one keyword',
      'transition_rules[1].trigger_keywords[1]: a keyword cannot be empty, got ""',
      'transition_rules[2].context_conditions: a context_aware rule needs context_conditions',
      'transition_rules[3].transition_type: expected one of "input_triggered", "time_based", "context_aware", "manual", got "teleport"',
      'transition_rules[4].cooldown_seconds: too small: expected number to be >=0, got -1',
      'transition_rules[4].priority: expected a number, got "high"',
    ].sort(),
  );
});

t.test('context conditions: values, lists and operator objects; unknown operators refused', async (t) => {
  const ctx = (conditions: unknown) =>
    validConfig({ transition_rules: [rule({ transition_type: 'context_aware', trigger_keywords: [], context_conditions: conditions })] });
  const ok = await loadObject(
    t,
    ctx({
      location: 'kitchen',
      battery: { min: 10, max: 90 },
      people: 2,
      docked: false,
      tag: null,
      zone: ['a', 'b'],
      label: { contains: 'cat' },
      mood: { one_of: ['happy', 'calm'] },
      state: { not: 'charging' },
    }),
  );
  t.ok(ok.ok);
  if (ok.ok) t.same(ok.loaded.config.transition_rules[0]!.context_conditions!.battery, { min: 10, max: 90 });
  const bad = await loadObject(t, ctx({ battery: { above: 10 }, empty: {}, level: { min: 'low' } }));
  t.notOk(bad.ok);
  if (bad.ok) return;
  t.same([...new Set(bad.lines.map((l) => l.replace(/:.*/, '')))].sort(), [
    'transition_rules[0].context_conditions.battery',
    'transition_rules[0].context_conditions.empty',
    'transition_rules[0].context_conditions.level',
  ]);
  const at = 'transition_rules[0].context_conditions';
  t.ok(bad.lines.includes(`${at}.battery: unknown field(s) above`), 'names the unknown operator');
  t.ok(bad.lines.includes(`${at}.empty: an operator object needs one of min, max, contains, one_of, not`));
  t.ok(bad.lines.includes(`${at}.level: not a valid value: got an object`), 'a bad operand');
});

t.test('MCP servers: url required for sse and http, command for stdio, defaults', async (t) => {
  const ok = await loadObject(
    t,
    withGuard({
      mcp_servers: [
        { name: 'fs', transport: 'stdio', command: 'mcp-fs' },
        { name: 'web', transport: 'sse', url: 'http://127.0.0.1:3001/sse', headers: { 'X-Robot': 'spot' } },
        { name: 'api', transport: 'http', url: 'https://tools.example/mcp' },
      ],
    }),
  );
  t.ok(ok.ok);
  if (ok.ok) {
    const fs = ok.loaded.config.modes.guard!.mcp_servers[0]!;
    t.same({ args: fs.args, env: fs.env, headers: fs.headers }, { args: [], env: {}, headers: {} });
  }
  const bad = await loadObject(
    t,
    withGuard({
      mcp_servers: [
        { name: 'a', transport: 'sse' },
        { name: 'b', transport: 'http', url: 'not a url' },
        { name: 'c', transport: 'stdio' },
        { name: 'd', transport: 'websocket', url: 'ws://x' },
        { name: 'a', transport: 'stdio', command: 'x' },
      ],
    }),
  );
  t.notOk(bad.ok);
  if (bad.ok) return;
  const at = 'modes.guard.mcp_servers';
  t.same(
    bad.lines.sort(),
    [
      `${at}[0].url: url is required for transport sse`,
      `${at}[1].url: not a URL: "not a url"`,
      `${at}[2].command: a stdio tool server needs command`,
      `${at}[3].transport: expected one of "stdio", "sse", "http", got "websocket"`,
    ].sort(),
    'schema problems first; the duplicate name is a cross-check of a parsed file',
  );
  const dup = await loadObject(
    t,
    withGuard({
      mcp_servers: [
        { name: 'a', transport: 'stdio', command: 'x' },
        { name: 'a', transport: 'stdio', command: 'y' },
      ],
    }),
  );
  t.same(!dup.ok && dup.lines, [`${at}[1].name: duplicate tool server name "a"`]);
});

t.test('actions: implementation defaults to passthrough, exclude_from_prompt to false; required fields', async (t) => {
  const ok = await loadObject(
    t,
    withGuard({
      agent_actions: [
        { name: 'speak', llm_label: 'speak', connector: 'tts' },
        { name: 'move', llm_label: 'move', connector: 'ros', implementation: 'custom', exclude_from_prompt: true, config: { speed: 1 } },
      ],
    }),
  );
  t.ok(ok.ok);
  if (ok.ok) {
    const [a, b] = ok.loaded.config.modes.guard!.agent_actions;
    t.same([a!.implementation, a!.exclude_from_prompt, a!.config], ['passthrough', false, {}]);
    t.same([b!.implementation, b!.exclude_from_prompt, b!.config], ['custom', true, { speed: 1 }]);
  }
  const bad = await loadObject(t, withGuard({ agent_actions: [{ name: 'speak', connector: 'tts', exclude_from_prompt: 'no' }] }));
  t.same(!bad.ok && bad.lines.sort(), [
    'modes.guard.agent_actions[0].exclude_from_prompt: expected a boolean (true or false), got "no"',
    'modes.guard.agent_actions[0].llm_label: missing (required: a string)',
  ]);
});

t.test('cross-checks: default_mode and rule modes exist (own keys only), labels unique', async (t) => {
  const r = await loadObject(
    t,
    validConfig({
      default_mode: 'patrol',
      modes: {
        guard: mode({
          agent_actions: [
            { name: 'speak', llm_label: 'say', connector: 'a' },
            { name: 'speak2', llm_label: 'say', connector: 'b' },
          ],
        }),
        rest: mode(),
      },
      transition_rules: [rule({ from_mode: 'nowhere' }), rule({ to_mode: 'toString' }), rule({ from_mode: '*', to_mode: 'constructor' })],
    }),
  );
  t.notOk(r.ok);
  if (r.ok) return;
  const known = 'known modes: "guard", "rest"';
  t.same(
    r.lines.sort(),
    [
      `default_mode: "patrol" is not a mode; ${known}`,
      'modes.guard.agent_actions[1].llm_label: "say" is already used by agent_actions[0]; the model could not tell them apart',
      `transition_rules[0].from_mode: "nowhere" is not a mode ("*" means any mode); ${known}`,
      `transition_rules[1].to_mode: "toString" is not a mode; ${known}`,
      `transition_rules[2].to_mode: "constructor" is not a mode; ${known}`,
    ].sort(),
  );
  t.ok(r.issues.every((i) => i.kind === 'reference'));
  const ctor = await loadObject(t, validConfig({ default_mode: 'constructor' }));
  t.match(!ctor.ok && ctor.lines, [/^default_mode: "constructor" is not a mode/]);
});

t.test('cross-checks: manual rules need manual switching; time_based rules need a timeout', async (t) => {
  const r = await loadObject(
    t,
    validConfig({
      allow_manual_switching: false,
      transition_rules: [
        { from_mode: '*', to_mode: 'rest', transition_type: 'manual', priority: 0 },
        { from_mode: 'guard', to_mode: 'rest', transition_type: 'time_based', priority: 0 },
      ],
    }),
  );
  t.same(!r.ok && r.lines.sort(), [
    'transition_rules[0].transition_type: a manual rule needs allow_manual_switching: true',
    'transition_rules[1].timeout_seconds: a time_based rule needs timeout_seconds here or in mode "guard"',
  ]);
  const fromMode = await loadObject(
    t,
    validConfig({
      modes: { guard: mode({ timeout_seconds: 10 }), rest: mode() },
      transition_rules: [{ from_mode: 'guard', to_mode: 'rest', transition_type: 'time_based', priority: 0 }],
    }),
  );
  t.ok(fromMode.ok, "the mode's timeout_seconds is enough");
});

t.test('modes: at least one, names must not be "*", hertz in range, mode fields typed', async (t) => {
  const none = await loadObject(t, validConfig({ modes: {}, transition_rules: [] }));
  t.ok(!none.ok && none.lines.includes('modes: at least one mode is required'));
  const star = await loadObject(t, validConfig({ default_mode: '*', modes: { '*': mode() }, transition_rules: [] }));
  t.ok(!star.ok && star.lines.includes('modes["*"]: "*" is reserved for rules that apply from any mode'));
  const fields = await loadObject(t, withGuard({ hertz: 500, timeout_seconds: -1, remember_locations: 'yes', agent_inputs: {}, display_name: 3 }));
  t.same(!fields.ok && fields.lines.sort(), [
    'modes.guard.agent_inputs: expected a list, got an object',
    'modes.guard.display_name: expected a string, got 3',
    'modes.guard.hertz: must be at most 100 Hz, got 500',
    'modes.guard.remember_locations: expected a boolean (true or false), got "yes"',
    'modes.guard.timeout_seconds: too small: expected number to be >0, got -1',
  ]);
  const top = await loadObject(t, validConfig({ allow_manual_switching: 'yes', mode_memory_enabled: undefined, system_governance: 7 }));
  t.same(!top.ok && top.lines.sort(), [
    'allow_manual_switching: expected a boolean (true or false), got "yes"',
    'mode_memory_enabled: missing (required: a boolean (true or false))',
    'system_governance: expected a string, got 7',
  ]);
});

t.test('a function hook whose module is missing is a warning naming the hook and the directory; a present one is silent', async (t) => {
  const { mkdtempSync, mkdirSync, writeFileSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { loadConfig } = await import('../../src/config/load.js');
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-hookmod-'));
  mkdirSync(join(dir, 'hooks'));
  writeFileSync(join(dir, 'hooks', 'present.js'), 'export function go() {}\n');
  const hook = (fn: string) => `{ hook_type: "on_entry", handler_type: "function", handler_config: { function: "${fn}" } }`;
  writeFileSync(
    join(dir, 'a.json5'),
    `{ version: "v1.0.5", name: "a", api_key: "key_test_x", system_governance: "g", system_prompt_base: "p", hertz: 1,
       cortex_llm: { type: "CloudLLM" }, agent_inputs: [], agent_actions: [], lifecycle_hooks: [${hook('present.go')}, ${hook('absent.go')}] }`,
  );
  const previous = process.env.CORTEX_CONFIG_DIR;
  process.env.CORTEX_CONFIG_DIR = dir;
  t.teardown(() => {
    if (previous === undefined) delete process.env.CORTEX_CONFIG_DIR;
    else process.env.CORTEX_CONFIG_DIR = previous;
  });
  const loaded = await loadConfig({ name: 'a' }, { env: {} });
  const hookWarnings = loaded.warnings.filter((w) => w.includes('function hook'));
  t.equal(hookWarnings.length, 1, 'only the missing module');
  t.match(hookWarnings[0], /: lifecycle_hooks\[1\]\.handler_config: function hook module "absent" not found in .*hooks.*the hook will fail when it runs/);
});

t.test('cross-checks: action_dependencies name the mode actions, have no cycle, and need action_execution_mode dependencies', async (t) => {
  const actions = [
    { name: 'speak', llm_label: 'speak', connector: 'a' },
    { name: 'move', llm_label: 'move', connector: 'b' },
    { name: 'face', llm_label: 'emotion', connector: 'c' },
  ];
  const r = await loadObject(
    t,
    validConfig({
      modes: {
        guard: mode({
          agent_actions: actions,
          action_execution_mode: 'dependencies',
          action_dependencies: { speak: ['move', 'emotoin'], move: ['emotion'], emotion: ['speak'] },
        }),
        rest: mode({ agent_actions: actions, action_dependencies: { speak: ['move'] } }),
      },
    }),
  );
  t.notOk(r.ok);
  if (r.ok) return;
  t.same(
    r.lines.sort(),
    [
      'modes.guard.action_dependencies.speak[1]: "emotoin" is not an action of this mode; the mode\'s action labels: "speak", "move", "emotion"; did you mean "emotion"?',
      'modes.guard.action_dependencies.speak: dependency cycle "speak" -> "move" -> "emotion" -> "speak": these actions would wait for each other forever',
      'modes.rest.action_dependencies: read only with action_execution_mode: "dependencies" (this mode\'s is "concurrent"); set it or remove action_dependencies',
    ].sort(),
  );
  const bad = await loadObject(t, validConfig({ modes: { guard: mode({ action_execution_mode: 'parallel' }), rest: mode() } }));
  t.match(!bad.ok && bad.lines, [/^modes\.guard\.action_execution_mode: .*concurrent.*sequential.*dependencies/]);
  const good = await loadObject(
    t,
    validConfig({
      modes: {
        guard: mode({ agent_actions: actions, action_execution_mode: 'sequential' }),
        rest: mode({ agent_actions: actions, action_execution_mode: 'dependencies', action_dependencies: { move: ['speak'] } }),
      },
    }),
  );
  t.ok(good.ok, 'a sequential mode and an acyclic dependencies mode load');
});
