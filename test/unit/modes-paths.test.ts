// Walks every transition of two multi-mode reference configs: @xstate/graph plans paths on the drawn statechart, the real machine follows them.
import t from 'tap';
import { join } from 'node:path';
import { createMachine } from 'xstate';
import { adjacencyMapToArray, getAdjacencyMap, getShortestPaths } from '@xstate/graph';
import { loadConfig } from '../../src/config/load.js';
import type { AgentConfig, RuleConfig } from '../../src/config/schema.js';
import { toStatelyJson } from '../../src/modes/graph.js';
import { compileRules, selectInputRule } from '../../src/modes/rules.js';
import { start } from '../fixtures/modes/harness.js';

const corpus = join(process.cwd(), '..', 'shared', 'reference', 'om1-configs');

/** Context values that satisfy simple conditions (equality, lists, min/max, one_of). */
function satisfying(conditions: RuleConfig['context_conditions']): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, c] of Object.entries(conditions ?? {})) {
    if (Array.isArray(c)) out[k] = c[0];
    else if (c && typeof c === 'object') {
      const o = c as { min?: number; max?: number; one_of?: unknown[] };
      out[k] = o.one_of?.[0] ?? o.min ?? o.max;
    } else out[k] = c;
  }
  return out;
}

/** A keyword of rule `index` that makes it win in `mode`, or undefined when higher rules shadow all its keywords. */
function winningKeyword(cfg: AgentConfig, mode: string, index: number): string | undefined {
  const rules = compileRules(cfg);
  return cfg.transition_rules[index]!.trigger_keywords.find((k) => selectInputRule(rules, mode, k, {}, 0)?.rule.index === index);
}

/** Independent shadowing check: every keyword also belongs to an earlier rule of at least equal priority, or a higher one, from that mode. */
function shadowedByOthers(cfg: AgentConfig, mode: string, index: number): boolean {
  const rule = cfg.transition_rules[index]!;
  return rule.trigger_keywords.every((k) =>
    cfg.transition_rules.some(
      (o, j) =>
        j !== index &&
        o.transition_type === 'input_triggered' &&
        (o.from_mode === mode || o.from_mode === '*') &&
        o.to_mode !== mode &&
        (o.priority > rule.priority || (o.priority === rule.priority && j < index)) &&
        o.trigger_keywords.some((ok) => ok.toLowerCase() === k.toLowerCase()),
    ),
  );
}

for (const file of ['spot_modes.json5', 'unitree_go2_modes.json5']) {
  t.test(`every transition of ${file}`, async (t) => {
    const cfg = (await loadConfig({ file: join(corpus, file) }, { plugins: false, unknownFields: 'warn', env: { OM_API_KEY: 'k' } })).config;
    const model = createMachine(toStatelyJson(cfg) as never);
    const events = cfg.transition_rules.map((_, i) => ({ type: `rule.${i}` }));
    const edges = adjacencyMapToArray(getAdjacencyMap(model, { events })).filter((e) => e.state.value !== e.nextState.value);
    t.ok(edges.length >= cfg.transition_rules.length, `${edges.length} edges to walk`);
    const maxCooldownMs = Math.max(0, ...cfg.transition_rules.map((r) => r.cooldown_seconds ?? 0)) * 1000 + 1;
    let walked = 0;
    const shadowed: string[] = [];
    for (const edge of edges) {
      const from = edge.state.value as string;
      const index = Number(edge.event.type.slice('rule.'.length));
      const name = `${from} -[#${index}]-> ${edge.nextState.value as string}`;
      const rule = cfg.transition_rules[index]!;
      if (rule.transition_type === 'input_triggered' && !winningKeyword(cfg, from, index)) {
        t.ok(shadowedByOthers(cfg, from, index), `${name} is unreachable only because other rules win every keyword`);
        shadowed.push(name);
        continue;
      }
      const [path] = getShortestPaths(model, { events, toState: (s) => s.value === from });
      t.ok(path, `a path reaches ${from}`);
      const m = start(cfg);
      await m.active(cfg.default_mode);
      for (const step of [...path!.steps.slice(1).map((s) => s.event), edge.event]) {
        const mode = m.current();
        const i = Number(step.type.slice('rule.'.length));
        const r = cfg.transition_rules[i]!;
        m.clock.increment(maxCooldownMs);
        if (r.transition_type === 'input_triggered') m.actor.send({ type: 'input.text', text: `well, ${winningKeyword(cfg, mode, i)} please` });
        else if (r.transition_type === 'context_aware') m.actor.send({ type: 'context.update', values: satisfying(r.context_conditions) });
        else if (r.transition_type === 'manual') m.actor.send({ type: 'mode.switch', mode: r.to_mode });
        else m.clock.increment((r.timeout_seconds ?? cfg.modes[mode]!.timeout_seconds ?? 0) * 1000);
        await m.active(r.to_mode);
        t.equal(m.actor.getSnapshot().context.lastTransition?.rule_index, i, `${mode} -> ${r.to_mode} by rule #${i}`);
      }
      m.actor.stop();
      walked++;
    }
    t.equal(walked + shadowed.length, edges.length, `walked ${walked} transitions; shadowed: ${shadowed.join('; ') || 'none'}`);
    t.ok(walked > 0);
  });
}
