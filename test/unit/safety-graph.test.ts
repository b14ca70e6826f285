// `cortexd graph --safety`: the governor's statechart drawn from its own definition, as Mermaid, DOT (and SVG through Graphviz) and JSON.
import t from 'tap';
import { renderSafetyGraph } from '../../cli/graph.js';
import { findOnPath } from '../../src/which.js';

t.test('Mermaid shows the four regions, the latch, the dead-man timer and what every state handles', async (t) => {
  const text = await renderSafetyGraph('mermaid');
  t.match(text, /^stateDiagram-v2\n/);
  for (const region of ['estop', 'motion', 'model', 'agent']) t.match(text, new RegExp(`state "${region}" as safety_${region}`));
  t.equal(text.split('\n').filter((l) => l.trim() === '--').length, 3, 'parallel regions separated');
  t.match(text, /safety_estop_released --> safety_estop_latched : safety\.estop \/ latch/);
  t.match(text, /safety_estop_latched --> safety_estop_released : safety\.release \/ release/);
  t.match(text, /safety_estop_boot --> safety_estop_latched : always \[restoredLatch\]/);
  t.match(text, /safety_motion_moving_fed --> safety_motion_moving_fed : after deadman \/ deadmanExpired/);
  t.match(text, /safety_motion_moving --> safety_motion_resting : after maxContinuous/);
  t.match(text, /safety_model_waiting --> safety_model_stalled : after modelStall/);
  t.match(text, /note right of safety_estop : in every state safety\.request \/ decideRequest/);
});

t.test('JSON nests the states with tags and transitions; DOT renders to SVG with Graphviz', async (t) => {
  const json = JSON.parse(await renderSafetyGraph('json'));
  t.match(json, { id: 'safety', type: 'parallel', states: { estop: { initial: 'safety.estop.boot', states: { latched: { tags: ['estopped'] } } } } });
  t.match(json.states.motion.states.moving.states.fed.transitions, [
    { on: 'motion.fed', target: ['safety.motion.moving.fed'] },
    { on: 'after deadman / deadmanExpired' },
  ]);
  t.ok(json.everywhere.includes('safety.request / decideRequest'));
  const dot = await renderSafetyGraph('dot');
  t.match(dot, /subgraph "cluster_safety\.estop"/);
  if (!findOnPath('dot')) return t.comment('Graphviz not installed: SVG not checked');
  const svg = await renderSafetyGraph('svg');
  t.match(svg, /<svg/);
  t.match(svg, /latched/);
});
