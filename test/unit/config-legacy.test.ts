// Proves a legacy single-mode file becomes one default mode (manual switching and memory off, no rules), shown so by `modes`.
import t from 'tap';
import { renderModes } from '../../cli/modes-table.js';
import { legacyConfig, loadObject } from '../helpers/config-fixtures.js';

t.test('a file without modes is one mode named after name, default, switching and memory off, no rules', async (t) => {
  const r = await loadObject(t, legacyConfig({ timeout_seconds: 30, save_interactions: true }));
  t.ok(r.ok);
  if (!r.ok) return;
  const { config, legacy } = r.loaded;
  t.equal(legacy, true);
  t.same(Object.keys(config.modes), ['greeter']);
  t.equal(config.default_mode, 'greeter');
  t.equal(config.allow_manual_switching, false);
  t.equal(config.mode_memory_enabled, false);
  t.same(config.transition_rules, []);
  const m = config.modes.greeter!;
  t.equal(m.hertz, 2);
  t.equal(m.system_prompt_base, 'You greet.');
  t.equal(m.timeout_seconds, 30);
  t.equal(m.save_interactions, true);
  t.equal(m.remember_locations, false);
  t.same(m.agent_inputs, [{ type: 'SomeInput', config: {} }]);
  t.same(m.agent_actions, [
    { name: 'speak', llm_label: 'speak', connector: 'some_tts', implementation: 'passthrough', config: {}, exclude_from_prompt: false },
  ]);
  t.same(m.cortex_llm, { type: 'SomeLLM', config: {} });
  t.same(r.warnings, []);
});

t.test('without name, the mode is named after the file', async (t) => {
  const cfg = legacyConfig();
  delete cfg.name;
  const r = await loadObject(t, cfg, {}, 'hall_bot');
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(Object.keys(r.loaded.config.modes), ['hall_bot']);
  t.equal(r.loaded.config.name, 'hall_bot');
});

t.test('problems of a legacy file are reported at the paths the file uses', async (t) => {
  const cfg = legacyConfig({ agent_inputs: [{ type: 7 }], unknown_top: 1 });
  delete cfg.hertz;
  const r = await loadObject(t, cfg);
  t.notOk(r.ok);
  if (r.ok) return;
  t.same(r.lines.sort(), [
    'agent_inputs[0].type: expected a string, got 7',
    'hertz: missing (required: a number)',
    'unknown_top: unknown field: this runtime does not carry it out (remove it; `cortexd schema` lists the fields it reads; an OM1 file runs with --om1)',
  ]);
});

t.test('`cortexd modes` prints the converted form', async (t) => {
  const r = await loadObject(t, legacyConfig());
  t.ok(r.ok);
  if (!r.ok) return;
  const text = renderModes(r.loaded);
  t.match(text, /configuration: subject \(converted from a single-mode file\)/);
  t.match(text, /default mode: greeter\s+manual switching: off\s+mode memory: off/);
  t.match(text, /greeter \*/, 'the one mode, marked default');
  t.match(text, /SomeInput/);
  t.match(text, /speak:some_tts/);
  t.match(text, /transition rules: none/);
});
