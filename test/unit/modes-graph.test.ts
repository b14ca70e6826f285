// Proves graph output carries rule labels (type, keywords, priority, cooldown), timeouts, "*" rules (expanded for machines, drawn once) and the initial mode.
import t from 'tap';
import { createActor, createMachine } from 'xstate';
import { config, mode } from '../fixtures/modes/harness.js';
import { ANY_MODE, drawnEdges, legendLines, modeEdges, toDot, toMermaid, toStatelyJson } from '../../src/modes/graph.js';

const cfg = config({
  modes: { idle: mode({ display_name: 'Idle', timeout_seconds: 60 }), talk: mode({ display_name: 'Talk "loud"' }), 'odd name': mode() },
  default_mode: 'idle',
  transition_rules: [
    { from_mode: 'idle', to_mode: 'talk', transition_type: 'input_triggered', trigger_keywords: ['talk', 'tell me'], priority: 3, cooldown_seconds: 5 },
    { from_mode: '*', to_mode: 'idle', transition_type: 'time_based', priority: 1, timeout_seconds: 300 },
    { from_mode: 'talk', to_mode: 'odd name', transition_type: 'context_aware', priority: 2, context_conditions: { battery: { max: 20 } } },
    { from_mode: 'idle', to_mode: 'odd name', transition_type: 'time_based', priority: 1 },
  ],
});

t.test('edges: "*" expands to every other mode; labels carry type, priority, cooldown, keywords, timeouts', async (t) => {
  const edges = modeEdges(cfg);
  t.same(
    edges.map((e) => `${e.from}>${e.to}#${e.ruleIndex}`),
    ['idle>talk#0', 'talk>idle#1', 'odd name>idle#1', 'talk>odd name#2', 'idle>odd name#3'],
  );
  t.equal(edges[0]!.label, 'input_triggered p3 cd5s: "talk", "tell me"');
  t.equal(edges[1]!.label, 'time_based p1: after 300s');
  t.equal(edges[3]!.label, 'context_aware p2: battery <= 20');
  t.equal(edges[4]!.label, 'time_based p1: at mode timeout 60s');
});

t.test('drawn edges: a "*" rule is one edge from "any mode", labelled once', async (t) => {
  const edges = drawnEdges(cfg);
  t.same(
    edges.map((e) => `${e.from}>${e.to}#${e.ruleIndex}`),
    ['idle>talk#0', `${ANY_MODE}>idle#1`, 'talk>odd name#2', 'idle>odd name#3'],
  );
  t.same(legendLines(cfg)[1], '#1 any mode → idle: time_based p1: after 300s');
  const star = config({
    modes: { a: mode(), b: mode() },
    default_mode: 'a',
    transition_rules: [{ from_mode: '*', to_mode: 'a', transition_type: 'time_based', priority: 1 }],
  });
  t.equal(drawnEdges(star)[0]!.label, "time_based p1: at each mode's timeout");
});

t.test('mermaid: initial arrow, safe ids for odd names, labels without breaking characters', async (t) => {
  const text = toMermaid(cfg);
  t.match(text, /^stateDiagram-v2\n/);
  t.match(text, /\[\*\] --> idle\n/);
  t.match(text, /state "Idle - \(idle\) - timeout 60s" as idle/);
  t.match(text, /state "M - \(odd name\)" as mode_2/);
  t.match(text, /idle --> talk : R0 input_triggered p3 cd5s 'talk', 'tell me'/);
  t.match(text, /talk --> mode_2 : R2 context_aware p2 battery ≤ 20/);
  t.notMatch(text, /Talk "loud"/, 'double quotes inside labels are replaced');
  t.match(text, /state "any mode" as any_mode\n/);
  t.equal(text.match(/ --> idle : R1 /g)?.length, 1, 'the "*" rule is drawn once, from "any mode"');
  t.match(text, /any_mode --> idle : R1 time_based p1 after 300s/);
});

t.test('dot: quoted ids, escaped labels, styles per rule type', async (t) => {
  const text = toDot(cfg);
  t.match(text, /"__start" -> "idle";/);
  t.match(text, /"talk" \[label="Talk \\"loud\\"\\n\(talk\)"\];/);
  t.match(text, /"idle" -> "talk" \[label="#0 input_triggered p3\\ncd5s: \\"talk\\", \\"tell me\\""\];/, 'labels wrapped into short lines');
  t.match(text, /"__any" -> "idle" \[label="#1 time_based p1: after\\n300s", style=dashed\];/, 'the "*" rule starts at the "any mode" node, once');
  t.equal(text.match(/-> "idle" \[label/g)?.length, 1, 'one arrow into idle besides the start');
  const compact = toDot(cfg, { compact: true });
  t.match(compact, /rankdir=TB;/);
  t.match(compact, /"idle" -> "talk" \[label="#0"\];/, 'a compact chart has rule numbers on its arrows');
});

t.test('json: an XState machine config with rule events and timeouts in meta', async (t) => {
  const json = toStatelyJson(cfg);
  const machine = createMachine(JSON.parse(JSON.stringify(json)));
  t.equal(machine.root.initial?.target[0]?.key, 'idle');
  t.same((json.states as Record<string, { meta: unknown }>).idle!.meta, { display_name: 'Idle', timeout_seconds: 60 });
  const actor = createActor(machine).start();
  actor.send({ type: 'rule.0' });
  t.equal(actor.getSnapshot().value, 'talk');
  actor.stop();
});
