// The mode statechart of a configuration as data and text: edges with rule labels, Stately/XState JSON, Mermaid, DOT.
import type { AgentConfig, RuleConfig } from '../config/schema.js';
import { describeConditions } from './conditions.js';

/** One drawn transition: a rule from one concrete mode (a `*` rule yields one edge per other mode). */
export interface ModeEdge {
  from: string;
  to: string;
  ruleIndex: number;
  type: RuleConfig['transition_type'];
  label: string;
}

const MAX_KEYWORDS_SHOWN = 6;

/** `input_triggered p3 cd5s: "explore", "map"` / `time_based p2 after 300s` / `context_aware p3: x = true`. */
export function ruleLabel(rule: RuleConfig, config: Pick<AgentConfig, 'modes'>, fromMode?: string): string {
  const head = [rule.transition_type, `p${rule.priority}`];
  if (rule.cooldown_seconds !== undefined && rule.cooldown_seconds > 0) head.push(`cd${rule.cooldown_seconds}s`);
  let detail = '';
  if (rule.transition_type === 'input_triggered') {
    const shown = rule.trigger_keywords.slice(0, MAX_KEYWORDS_SHOWN).map((k) => `"${k}"`);
    if (rule.trigger_keywords.length > MAX_KEYWORDS_SHOWN) shown.push(`+${rule.trigger_keywords.length - MAX_KEYWORDS_SHOWN} more`);
    detail = shown.join(', ');
  } else if (rule.transition_type === 'time_based') {
    const modeTimeout = fromMode ? config.modes[fromMode]?.timeout_seconds : undefined;
    const after = rule.timeout_seconds ?? modeTimeout;
    detail = after === undefined ? 'at mode timeout (none set)' : rule.timeout_seconds !== undefined ? `after ${after}s` : `at mode timeout ${after}s`;
  } else if (rule.transition_type === 'context_aware') {
    detail = describeConditions(rule.context_conditions);
  } else {
    detail = 'manual switch';
  }
  return `${head.join(' ')}: ${detail}`;
}

/** Every edge of the statechart; a `*` rule is drawn from every mode except its target. */
export function modeEdges(config: Pick<AgentConfig, 'modes' | 'transition_rules'>): ModeEdge[] {
  const names = Object.keys(config.modes);
  const edges: ModeEdge[] = [];
  config.transition_rules.forEach((rule, ruleIndex) => {
    const froms = rule.from_mode === '*' ? names : [rule.from_mode];
    for (const from of froms) {
      if (from === rule.to_mode || !Object.hasOwn(config.modes, from) || !Object.hasOwn(config.modes, rule.to_mode)) continue;
      edges.push({ from, to: rule.to_mode, ruleIndex, type: rule.transition_type, label: ruleLabel(rule, config, from) });
    }
  });
  return edges;
}

/** The label of a mode node: display name, key, timeout. */
export function modeLabel(name: string, config: Pick<AgentConfig, 'modes'>): string[] {
  const m = config.modes[name]!;
  const lines = m.display_name && m.display_name !== name ? [m.display_name, `(${name})`] : [name];
  if (m.timeout_seconds !== undefined) lines.push(`timeout ${m.timeout_seconds}s`);
  return lines;
}

/**
 * A JSON machine config (XState v5 / Stately editor form): one state per mode, one event per rule
 * (`rule.<index>`) with the rule's label as the transition description, the mode timeout in `meta`.
 * `createMachine(json)` accepts it and @xstate/graph traverses it.
 */
export function toStatelyJson(config: AgentConfig): Record<string, unknown> {
  const edges = modeEdges(config);
  const states: Record<string, unknown> = {};
  for (const name of Object.keys(config.modes)) {
    const m = config.modes[name]!;
    const on: Record<string, unknown> = {};
    for (const e of edges.filter((x) => x.from === name)) on[`rule.${e.ruleIndex}`] = { target: e.to, description: e.label };
    states[name] = {
      description: m.description,
      meta: { display_name: m.display_name, ...(m.timeout_seconds !== undefined ? { timeout_seconds: m.timeout_seconds } : {}) },
      ...(Object.keys(on).length > 0 ? { on } : {}),
    };
  }
  return {
    id: config.name,
    initial: config.default_mode,
    description: config.allow_manual_switching ? 'manual switching allowed' : 'manual switching off',
    states,
  };
}

/** Mermaid text cannot hold some characters inside labels; they are replaced by look-alikes. */
function mermaidText(text: string): string {
  return text
    .replace(/"/g, "'")
    .replace(/<=/g, '≤')
    .replace(/>=/g, '≥')
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(/[:;#{}]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A Mermaid `stateDiagram-v2` of the configuration. */
export function toMermaid(config: AgentConfig): string {
  const names = Object.keys(config.modes);
  const id = new Map(names.map((n, i) => [n, /^[A-Za-z][A-Za-z0-9_]*$/.test(n) ? n : `mode_${i}`]));
  const lines = ['stateDiagram-v2'];
  for (const name of names) lines.push(`  state "${mermaidText(modeLabel(name, config).join(' - '))}" as ${id.get(name)}`);
  lines.push(`  [*] --> ${id.get(config.default_mode)}`);
  for (const e of modeEdges(config)) lines.push(`  ${id.get(e.from)} --> ${id.get(e.to)} : R${e.ruleIndex} ${mermaidText(e.label)}`);
  if (config.allow_manual_switching) lines.push(`  note right of ${id.get(config.default_mode)} : manual switching allowed`);
  return `${lines.join('\n')}\n`;
}

/** A DOT string literal. */
export function dotString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** A Graphviz digraph of the configuration. */
export function toDot(config: AgentConfig): string {
  const lines = [
    `digraph ${dotString(config.name)} {`,
    '  rankdir=LR;',
    '  node [shape=box, style=rounded, fontname="Helvetica"];',
    '  edge [fontname="Helvetica", fontsize=10];',
    '  "__start" [shape=point, label=""];',
  ];
  for (const name of Object.keys(config.modes)) lines.push(`  ${dotString(name)} [label=${dotString(modeLabel(name, config).join('\n'))}];`);
  lines.push(`  "__start" -> ${dotString(config.default_mode)};`);
  for (const e of modeEdges(config)) {
    const style = e.type === 'time_based' ? ', style=dashed' : e.type === 'context_aware' ? ', style=dotted' : '';
    lines.push(`  ${dotString(e.from)} -> ${dotString(e.to)} [label=${dotString(`#${e.ruleIndex} ${e.label}`)}${style}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
