// The `safety` block as `cortexd check` sees it: strict fields, ranges, and motion values checked against the mode's motion actions.
import t from 'tap';
import { AgentConfig } from '../../src/config/schema.js';
import { checkPlugins } from '../../src/config/plugins-check.js';

const config = (safety: unknown, modeSafety?: unknown) =>
  AgentConfig.parse({
    version: 'v1.0.5',
    name: 'c',
    default_mode: 'a',
    allow_manual_switching: false,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: '',
    modes: {
      a: {
        display_name: 'a',
        description: 'a',
        system_prompt_base: 'a',
        hertz: 1,
        agent_actions: [{ name: 'move', llm_label: 'legs', connector: 'console' }],
        ...(modeSafety ? { safety: modeSafety } : {}),
      },
      b: { display_name: 'b', description: 'b', system_prompt_base: 'b', hertz: 1, agent_actions: [{ name: 'face', llm_label: 'face', connector: 'console' }] },
    },
    safety,
  });

t.test('misspelt motion values are problems where they are written; a mode without motion actions is not checked', async (t) => {
  const problems = checkPlugins(config({ allowed_values: ['turn left', 'walk forwards'] }, { return_value: 'go home' })).problems;
  t.same(
    problems.map((p) => [p.path.join('.'), p.message.replace(/ \(known: .*\)/, '')]),
    [
      ['safety.allowed_values.1', '"walk forwards" is not a value of legs in mode a'],
      ['modes.a.safety.return_value', '"go home" is not a value of legs in mode a'],
    ],
  );
  t.match(problems[0]!.message, /known: stand still, sit, walk forward/);
  t.same(checkPlugins(config({ allowed_values: ['turn left'], stop_value: 'sit' })).problems, []);
});

t.test('the block is strict and checks its ranges', async (t) => {
  t.throws(() => config({ deadman_seconds: 0 }), /Too small/);
  t.throws(() => config({ dead_man_seconds: 2 }), /dead_man_seconds/);
  t.throws(() => config({ geofence: { polygon: [{ latitude: 1, longitude: 2 }] } }));
  t.throws(() => config({}, { estop_serial: { path: '/dev/x' } }), /estop_serial/, 'e-stop sources are global only');
  t.ok(
    config({ geofence: { center: { latitude: 48.1, longitude: 11.5 }, radius_m: 30 }, estop_serial: { path: '/dev/ttyUSB0' } }).safety?.estop_serial
      ?.sentence === 'ESTOP',
  );
});
