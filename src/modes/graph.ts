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
    detail =
      after !== undefined
        ? rule.timeout_seconds !== undefined
          ? `after ${after}s`
          : `at mode timeout ${after}s`
        : fromMode === undefined
          ? "at each mode's timeout"
          : 'at mode timeout (none set)';
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

/** The source of an edge drawn for a `*` rule: one "any mode" node instead of an edge from every mode. */
export const ANY_MODE = '*';

/**
 * The edges as drawn (DOT, SVG, Mermaid): concrete rules as in `modeEdges`, and each `*` rule once,
 * from ANY_MODE, so its label is not repeated per mode. Rules naming an unknown mode are left out.
 */
export function drawnEdges(config: Pick<AgentConfig, 'modes' | 'transition_rules'>): ModeEdge[] {
  const edges: ModeEdge[] = [];
  config.transition_rules.forEach((rule, ruleIndex) => {
    if (!Object.hasOwn(config.modes, rule.to_mode)) return;
    if (rule.from_mode === '*') {
      edges.push({ from: ANY_MODE, to: rule.to_mode, ruleIndex, type: rule.transition_type, label: ruleLabel(rule, config) });
    } else if (rule.from_mode !== rule.to_mode && Object.hasOwn(config.modes, rule.from_mode)) {
      edges.push({ from: rule.from_mode, to: rule.to_mode, ruleIndex, type: rule.transition_type, label: ruleLabel(rule, config, rule.from_mode) });
    }
  });
  return edges;
}

/** Words of `text` in lines of at most `width` characters (a longer word keeps its own line). */
export function wrapText(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

/** Label lines of an edge: the full rule wrapped, or (compact, for large charts with a legend) its number only. */
export function edgeLabelLines(e: ModeEdge, compact: boolean): string[] {
  return compact ? [`#${e.ruleIndex}`] : wrapText(`#${e.ruleIndex} ${e.label}`, EDGE_LABEL_WIDTH);
}

/** Characters per line of a full edge label. */
export const EDGE_LABEL_WIDTH = 24;

/** One line per drawn rule, for the legend of a compact chart: `#3 idle -> sleep: input_triggered p2: "sleep"`. */
export function legendLines(config: Pick<AgentConfig, 'modes' | 'transition_rules'>): string[] {
  return drawnEdges(config).map((e) => `#${e.ruleIndex} ${e.from === ANY_MODE ? 'any mode' : e.from} → ${e.to}: ${e.label}`);
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

/** A Mermaid `stateDiagram-v2` of the configuration; `*` rules start at one "any mode" state. */
export function toMermaid(config: AgentConfig): string {
  const names = Object.keys(config.modes);
  const id = new Map(names.map((n, i) => [n, /^[A-Za-z][A-Za-z0-9_]*$/.test(n) ? n : `mode_${i}`]));
  const edges = drawnEdges(config);
  const lines = ['stateDiagram-v2'];
  for (const name of names) lines.push(`  state "${mermaidText(modeLabel(name, config).join(' - '))}" as ${id.get(name)}`);
  if (edges.some((e) => e.from === ANY_MODE)) {
    let anyId = 'any_mode';
    while ([...id.values()].includes(anyId)) anyId = `_${anyId}`;
    id.set(ANY_MODE, anyId);
    lines.push(`  state "any mode" as ${anyId}`);
  }
  lines.push(`  [*] --> ${id.get(config.default_mode)}`);
  for (const e of edges) lines.push(`  ${id.get(e.from)} --> ${id.get(e.to)} : R${e.ruleIndex} ${mermaidText(e.label)}`);
  if (config.allow_manual_switching) lines.push(`  note right of ${id.get(config.default_mode)} : manual switching allowed`);
  return `${lines.join('\n')}\n`;
}

/** A DOT string literal. */
export function dotString(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

/** The Graphviz node of the "any mode" source of `*` rules (names starting `__` are not modes). */
export const DOT_ANY = '__any';

/**
 * A Graphviz digraph of the configuration: left to right with each rule's label wrapped; `compact`
 * (for charts too wide that way) draws top to bottom with rule numbers only, for a legend beside it.
 * `*` rules start at one dashed "any mode" node.
 */
export function toDot(config: AgentConfig, options: { compact?: boolean } = {}): string {
  const compact = options.compact === true;
  const edges = drawnEdges(config);
  const lines = [
    `digraph ${dotString(config.name)} {`,
    `  rankdir=${compact ? 'TB' : 'LR'};`,
    '  node [shape=box, style=rounded, fontname="Helvetica", fontsize=14];',
    `  edge [fontname="Helvetica", fontsize=${compact ? 12 : 11}];`,
    '  "__start" [shape=point, label=""];',
  ];
  for (const name of Object.keys(config.modes)) lines.push(`  ${dotString(name)} [label=${dotString(modeLabel(name, config).join('\n'))}];`);
  if (edges.some((e) => e.from === ANY_MODE)) lines.push(`  "${DOT_ANY}" [label="any mode", style="rounded,dashed", fontsize=12];`);
  lines.push(`  "__start" -> ${dotString(config.default_mode)};`);
  for (const e of edges) {
    const style = e.type === 'time_based' ? ', style=dashed' : e.type === 'context_aware' ? ', style=dotted' : '';
    const from = e.from === ANY_MODE ? DOT_ANY : e.from;
    lines.push(`  ${dotString(from)} -> ${dotString(e.to)} [label=${dotString(edgeLabelLines(e, compact).join('\n'))}${style}];`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
