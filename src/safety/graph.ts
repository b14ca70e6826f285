// Draws the safety governor's statechart (`cortexd graph --safety`): its XState definition as plain JSON, Mermaid or DOT.
import { dotString } from '../modes/graph.js';

/** The parts of an XState v5 state node definition (`machine.root.definition`) that a drawing needs. */
export interface StateDefinition {
  id: string;
  key: string;
  type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  tags?: readonly string[];
  initial?: { target: readonly unknown[] };
  states: Record<string, StateDefinition>;
  transitions: ReadonlyArray<TransitionDefinition>;
  always?: ReadonlyArray<TransitionDefinition>;
}

interface TransitionDefinition {
  eventType: string;
  target?: readonly unknown[];
  guard?: unknown;
  actions?: readonly unknown[];
}

/** A state node of a machine (`machine.root`): its definition, its `always` transitions and its children. */
export interface StateNodeLike {
  definition: Omit<StateDefinition, 'states' | 'always'>;
  always?: ReadonlyArray<TransitionDefinition>;
  states: Record<string, StateNodeLike>;
}

/** The definition tree of a machine's root, with the eventless (`always`) transitions the plain definition leaves out. */
export function definitionOf(node: StateNodeLike): StateDefinition {
  return {
    ...node.definition,
    always: node.always ?? [],
    states: Object.fromEntries(Object.entries(node.states).map(([k, v]) => [k, definitionOf(v)])),
  };
}

/** One drawn edge, by state ids. */
export interface DrawnEdge {
  from: string;
  to: string;
  label: string;
}

const idOf = (t: unknown): string => {
  const s = typeof t === 'string' ? t : ((t as { id?: string }).id ?? String(t));
  return s.startsWith('#') ? s.slice(1) : s;
};
const nameOf = (x: unknown): string | undefined =>
  typeof x === 'string' ? x : typeof (x as { type?: unknown })?.type === 'string' ? (x as { type: string }).type : undefined;

/** `safety.estop`, `after deadman`, `always [restoredLatch]`, with the actions after a slash. */
function label(t: TransitionDefinition): string {
  const after = /^xstate\.after\.([^.]+)\./.exec(t.eventType);
  let text = after ? `after ${after[1]}` : t.eventType === '' ? 'always' : t.eventType;
  const guard = nameOf(t.guard);
  if (guard) text += ` [${guard}]`;
  const actions = (t.actions ?? []).map(nameOf).filter((a): a is string => a !== undefined);
  if (actions.length) text += ` / ${actions.join(', ')}`;
  return text;
}

/** Events the root handles in every state (without a target): drawn as a note, not as edges. */
export function everywhere(root: StateDefinition): string[] {
  return root.transitions.filter((t) => !t.target?.length).map(label);
}

/** Every transition of the chart below the root; a transition without a target (an action only) is drawn as a self-loop. */
export function chartEdges(root: StateDefinition): DrawnEdge[] {
  const edges: DrawnEdge[] = [];
  const visit = (s: StateDefinition) => {
    for (const t of [...(s.always ?? []), ...(s === root ? s.transitions.filter((x) => x.target?.length) : s.transitions)]) {
      const targets = t.target && t.target.length ? t.target.map(idOf) : [s.id];
      for (const to of targets) edges.push({ from: s.id, to, label: label(t) });
    }
    for (const child of Object.values(s.states)) visit(child);
  };
  visit(root);
  return edges;
}

/** A compact JSON of the chart: nested states with type, tags, initial state and transitions. */
export function chartJson(root: StateDefinition): Record<string, unknown> {
  const node = (s: StateDefinition): Record<string, unknown> => {
    const transitions = [...(s.always ?? []), ...s.transitions].map((t) => ({ on: label(t), ...(t.target?.length ? { target: t.target.map(idOf) } : {}) }));
    const initial = s.initial?.target?.[0];
    return {
      type: s.type,
      ...(s.tags?.length ? { tags: [...s.tags] } : {}),
      ...(initial !== undefined ? { initial: idOf(initial) } : {}),
      ...(transitions.length ? { transitions } : {}),
      ...(Object.keys(s.states).length ? { states: Object.fromEntries(Object.entries(s.states).map(([k, v]) => [k, node(v)])) } : {}),
    };
  };
  return { id: root.id, ...node(root), everywhere: everywhere(root) };
}

const mid = (id: string) => id.replace(/[^A-Za-z0-9_]/g, '_');
const mtext = (text: string) =>
  text
    .replace(/[:;#{}"]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();

/** A Mermaid `stateDiagram-v2`: compound states nested, parallel regions separated by `--`. */
export function chartMermaid(root: StateDefinition): string {
  const lines = ['stateDiagram-v2'];
  const block = (s: StateDefinition, indent: string) => {
    const children = Object.values(s.states);
    const initial = s.initial?.target?.[0];
    children.forEach((child, i) => {
      if (s.type === 'parallel' && i > 0) lines.push(`${indent}--`);
      const tags = child.tags?.length ? ` (${child.tags.join(', ')})` : '';
      lines.push(`${indent}state "${mtext(child.key + tags)}" as ${mid(child.id)}`);
      if (Object.keys(child.states).length) {
        lines.push(`${indent}state ${mid(child.id)} {`);
        block(child, `${indent}  `);
        lines.push(`${indent}}`);
      }
    });
    if (initial !== undefined && s.type !== 'parallel') lines.push(`${indent}[*] --> ${mid(idOf(initial))}`);
  };
  block(root, '  ');
  for (const e of chartEdges(root)) lines.push(`  ${mid(e.from)} --> ${mid(e.to)} : ${mtext(e.label)}`);
  const first = Object.values(root.states)[0];
  const all = everywhere(root);
  if (first && all.length) lines.push(`  note right of ${mid(first.id)} : in every state ${mtext(all.join(', '))}`);
  return `${lines.join('\n')}\n`;
}

/** A Graphviz digraph: a cluster per compound or parallel state (parallel regions dashed). */
export function chartDot(root: StateDefinition): string {
  const lines = [
    `digraph ${dotString(root.id)} {`,
    '  compound=true; rankdir=LR;',
    '  node [shape=box, style=rounded, fontname="Helvetica"];',
    '  edge [fontname="Helvetica", fontsize=9];',
  ];
  const block = (s: StateDefinition, indent: string) => {
    for (const child of Object.values(s.states)) {
      const tags = child.tags?.length ? `\n(${child.tags.join(', ')})` : '';
      if (Object.keys(child.states).length) {
        lines.push(
          `${indent}subgraph ${dotString(`cluster_${child.id}`)} {`,
          `${indent}  label=${dotString(child.key + tags)};${s.type === 'parallel' ? ' style=dashed;' : ''}`,
        );
        lines.push(`${indent}  ${dotString(child.id)} [shape=point, label=""];`);
        const initial = child.initial?.target?.[0];
        if (initial !== undefined && child.type !== 'parallel')
          lines.push(`${indent}  ${dotString(child.id)} -> ${dotString(idOf(initial))} [style=dotted, label="initial"];`);
        block(child, `${indent}  `);
        lines.push(`${indent}}`);
      } else {
        lines.push(`${indent}${dotString(child.id)} [label=${dotString(child.key + tags)}];`);
      }
    }
  };
  block(root, '  ');
  for (const e of chartEdges(root)) lines.push(`  ${dotString(e.from)} -> ${dotString(e.to)} [label=${dotString(e.label)}];`);
  const all = everywhere(root);
  if (all.length) lines.push(`  "__everywhere" [shape=note, label=${dotString(`in every state:\n${all.join('\n')}`)}];`);
  lines.push('}');
  return `${lines.join('\n')}\n`;
}
