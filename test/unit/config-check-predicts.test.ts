// Proves `cortexd check` reports what the runtime would refuse: action hooks and their values, did-you-mean for unknown names, enum values listed, unreachable addresses, relative tool-server paths, the .env file.
import t, { type Test } from 'tap';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { closest, editDistance } from '../../src/plugins/suggest.js';
import { neverResolves } from '../../src/config/address-check.js';
import { mode, tempDir, tryLoad, validConfig, writeConfig } from '../helpers/config-fixtures.js';

const llm = { type: 'CloudLLM', config: {} };
const actions = [
  { name: 'move', llm_label: 'move', connector: 'console' },
  { name: 'face', llm_label: 'emotion', connector: 'console' },
];
const hook = (handler_config: Record<string, unknown>) => ({ hook_type: 'on_entry', handler_type: 'action', handler_config });

/** Loads with plugins resolved (as `check` does) and returns the problem lines. */
async function problems(t: Test, extra: Record<string, unknown>, env: Record<string, string> = {}): Promise<string[]> {
  const dir = tempDir(t);
  const file = writeConfig(dir, 'c', validConfig({ cortex_llm: llm, service: { base_url: 'embedded' }, ...extra }));
  const r = await tryLoad(file, { plugins: true, env });
  return r.ok ? [] : r.lines;
}

t.test('edit distance counts a swap of two letters as one edit; closest needs a near name', async (t) => {
  t.equal(editDistance('idel', 'idle'), 1);
  t.equal(editDistance('moove', 'move'), 1);
  t.equal(closest('moove', ['speak', 'move', 'emotion']), 'move');
  t.equal(closest('xyzzy', ['speak', 'move']), undefined, 'no suggestion when nothing is close');
});

t.test('action hooks: an unknown action names the mode, its actions and the likely one', async (t) => {
  const lines = await problems(t, {
    modes: { guard: mode({ agent_actions: actions, lifecycle_hooks: [hook({ action: 'moove', value: 'sit' })] }), rest: mode() },
  });
  t.same(lines, ['modes.guard.lifecycle_hooks[0].handler_config.action: mode "guard" has no action "moove"; its actions: move, emotion; did you mean "move"?']);
});

t.test('action hooks: a value the action refuses lists the valid values', async (t) => {
  const lines = await problems(t, {
    modes: {
      guard: mode({
        agent_actions: actions,
        lifecycle_hooks: [
          hook({ action: 'move', value: 'spin around' }),
          hook({ action: 'emotion', value: { emotion: 'hapy' } }),
          hook({ action: 'move', value: 'sit' }),
        ],
      }),
      rest: mode(),
    },
  });
  t.equal(lines.length, 2, lines.join('\n'));
  t.match(
    lines[0],
    /^modes\.guard\.lifecycle_hooks\[0\]\.handler_config\.value: "spin around" is not a value of move; valid: "stand still", "sit", .*"dance"$/,
  );
  t.match(lines[1], /^modes\.guard\.lifecycle_hooks\[1\]\.handler_config\.value: "hapy" is not a value of emotion; valid: "neutral", "joy"/);
});

t.test('global on_startup action hooks are checked against the default mode', async (t) => {
  const lines = await problems(t, {
    global_lifecycle_hooks: [
      { hook_type: 'on_startup', handler_type: 'message', handler_config: { message: 'hi' } },
      { ...hook({ action: 'emotion', value: 'joy' }), hook_type: 'on_startup' },
    ],
    modes: { guard: mode({ agent_actions: [actions[0]] }), rest: mode({ agent_actions: actions }) },
  });
  t.same(lines, ['global_lifecycle_hooks[1].handler_config.action: mode "guard" has no action "emotion"; its actions: move']);
});

t.test('did you mean: modes, plugin types, connectors; a binding lists its valid values', async (t) => {
  const lines = await problems(t, {
    default_mode: 'gaurd',
    modes: {
      guard: mode({
        agent_inputs: [{ type: 'TextInptu' }],
        agent_actions: [
          { name: 'speak', llm_label: 'speak', connector: 'local_tts', config: { speaker: { binding: 'files' } } },
          { name: 'move', llm_label: 'move', connector: 'consol' },
        ],
      }),
      rest: mode(),
    },
  });
  t.match(lines.join('\n'), /default_mode: "gaurd" is not a mode; known modes: "guard", "rest"; did you mean "guard"\?/);
  t.match(lines.join('\n'), /agent_inputs\[0\]\.type: unknown input type "TextInptu"; known: .*; did you mean "TextInput"\?/);
  t.match(
    lines.join('\n'),
    /agent_actions\[0\]\.config\.speaker\.binding: "files" is not a valid binding; valid: "player", "file", "null"; did you mean "file"\?/,
  );
  t.match(lines.join('\n'), /agent_actions\[1\]\.connector: unknown connector type "consol"; known: .*; did you mean "console"\?/);
});

t.test('addresses that can never resolve are errors where something calls them; an unused one is not', async (t) => {
  t.match(neverResolves('https://api.cortex.invalid'), /never resolves/);
  t.match(neverResolves('not a url'), /not a URL/);
  t.equal(neverResolves('https://example.com'), undefined, 'a name that may resolve is for doctor to try');
  const speakCloud = [{ name: 'speak', llm_label: 'speak', connector: 'speechlab_tts', config: { speaker: { binding: 'null' } } }];
  const lines = await problems(t, { service: { base_url: 'https://api.cortex.invalid' }, modes: { guard: mode({ agent_actions: speakCloud }), rest: mode() } });
  t.ok(
    lines.some((l) => /^service\.base_url: api\.cortex\.invalid never resolves .*set CORTEX_BASE_URL in .*\.env or the environment/.test(l)),
    lines.join('\n'),
  );
  const local = await problems(t, {
    service: { base_url: 'embedded' },
    modes: { guard: mode({ cortex_llm: { type: 'LocalLLM', config: { base_url: 'http://llm.invalid:8080/v1', model: 'm' } } }), rest: mode() },
  });
  t.ok(
    local.some((l) => /modes\.guard\.cortex_llm: llm\.invalid never resolves/.test(l)),
    local.join('\n'),
  );
});

t.test('a missing variable names the .env file that could set it', async (t) => {
  const lines = await problems(t, { system_governance: '${LAWS}' });
  t.match(lines.join('\n'), /system_governance: environment variable LAWS is not set and has no default: set it in .*\.env or the environment/);
});

t.test('tool server paths are relative to the configuration, shown resolved when missing; found from any directory', async (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'servers'));
  writeFileSync(join(dir, 'servers', 'ok.js'), '');
  const servers = [
    { name: 'a', transport: 'stdio', command: 'node', args: ['servers/ok.js', 'stdio'] },
    { name: 'b', transport: 'stdio', command: 'node', args: ['servers/gone.js', '--flag', '@scope/pkg'] },
  ];
  const file = writeConfig(
    dir,
    'c',
    validConfig({ cortex_llm: llm, service: { base_url: 'embedded' }, modes: { guard: mode({ mcp_servers: servers }), rest: mode() } }),
  );
  const r = await tryLoad(file, { plugins: true });
  t.same(!r.ok && r.lines, [
    `modes.guard.mcp_servers[1].args[0]: "servers/gone.js" not found: no file ${join(dir, 'servers', 'gone.js')} (relative paths are resolved against ${dir})`,
  ]);
  servers.pop();
  const good = writeConfig(
    dir,
    'c',
    validConfig({ cortex_llm: llm, service: { base_url: 'embedded' }, modes: { guard: mode({ mcp_servers: servers }), rest: mode() } }),
  );
  const ok = await tryLoad(good, { plugins: true });
  t.equal(ok.ok && ok.loaded.config.modes.guard!.mcp_servers[0]!.cwd, dir, 'the server runs in the configuration directory');
});
