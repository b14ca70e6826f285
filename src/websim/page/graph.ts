// The statechart panel: loads the server's SVG (Graphviz or elkjs), finds mode nodes and rule edges, marks current and last.
import type { Transition } from './state.js';

/** Handles on the drawn statechart; built once per page load. */
export interface DrawnGraph {
  /** Mode name -> its node group. */
  nodes: Map<string, Element>;
  /** Rule index -> edge groups (Graphviz) or label texts (both renderers) drawn for that rule. */
  rules: Map<number, Element[]>;
  svg: SVGSVGElement;
}

/** Graphviz node names that are not modes: the start point and the "any mode" source of `*` rules. */
const NOT_A_MODE = /^__/;
/** A rule's label (on an edge, or a legend line of a compact chart): `#3`, `#3 input_triggered ...`. */
const RULE_LABEL = /^#(\d+)(?:\s|$)/;

/**
 * Inserts the SVG into `container` and indexes it. Graphviz writes each node as `<g class="node">`
 * whose `<title>` is the mode name, and each edge as `<g class="edge">` whose label starts
 * `#<rule index>`; the elkjs drawing has `<g class="mode" id="m:<name>">` and bare label texts. A
 * compact chart's legend lines start `#<rule index>` too, so they are marked with their rule.
 */
export async function loadGraph(container: HTMLElement): Promise<DrawnGraph> {
  const res = await fetch('/graph.svg', { credentials: 'same-origin' });
  if (!res.ok) throw new Error(`graph.svg: HTTP ${res.status}`);
  const doc = new DOMParser().parseFromString(await res.text(), 'image/svg+xml');
  const root = doc.documentElement;
  if (root.nodeName !== 'svg') throw new Error('graph.svg is not an SVG document');
  for (const s of Array.from(root.querySelectorAll('script, foreignObject'))) s.remove();
  const svg = document.importNode(root, true) as unknown as SVGSVGElement;
  // The zoom sizes the drawing from its viewBox (page/zoom.ts).
  if (!svg.getAttribute('viewBox'))
    svg.setAttribute('viewBox', `0 0 ${parseFloat(svg.getAttribute('width') ?? '800')} ${parseFloat(svg.getAttribute('height') ?? '400')}`);
  svg.removeAttribute('width');
  svg.removeAttribute('height');
  container.replaceChildren(svg);

  const nodes = new Map<string, Element>();
  for (const g of Array.from(svg.querySelectorAll('g.node'))) {
    const title = g.querySelector(':scope > title')?.textContent ?? '';
    if (title && !NOT_A_MODE.test(title)) nodes.set(title, g);
  }
  for (const g of Array.from(svg.querySelectorAll('g.mode[id^="m:"]'))) if (!NOT_A_MODE.test(g.id.slice(2))) nodes.set(g.id.slice(2), g);
  for (const [name, g] of nodes) g.setAttribute('data-mode', name);

  const rules = new Map<number, Element[]>();
  const add = (i: number, e: Element) => rules.set(i, [...(rules.get(i) ?? []), e]);
  for (const text of Array.from(svg.querySelectorAll('text'))) {
    const m = RULE_LABEL.exec(text.textContent ?? '');
    if (!m) continue;
    const index = Number(m[1]);
    add(index, text);
    const edge = text.closest('g.edge');
    if (edge) {
      edge.setAttribute('data-rule', String(index));
      add(index, edge);
    }
  }
  return { nodes, rules, svg };
}

/**
 * Marks `mode` as current (class `current`, `aria-current`), the previous mode of the last
 * transition (class `previous`), and the edges and labels of the rule that fired (class `last`);
 * a manual switch without a rule marks no edge, the caption says so.
 */
export function highlight(graph: DrawnGraph, mode: string, last: Transition | null): void {
  for (const [name, g] of graph.nodes) {
    g.classList.toggle('current', name === mode);
    g.classList.toggle('previous', last !== null && name === last.from && name !== mode);
    if (name === mode) g.setAttribute('aria-current', 'true');
    else g.removeAttribute('aria-current');
  }
  for (const [index, elements] of graph.rules) {
    for (const e of elements) {
      const edge = e.matches('g.edge') ? e : e.closest('g.edge');
      // An edge from the "any mode" node (a `*` rule) is the one that fired whatever the mode it left.
      const isLast = last?.rule_index === index && (edge === null || edgeFrom(edge) === last.from || NOT_A_MODE.test(edgeFrom(edge)));
      e.classList.toggle('last', isLast);
    }
  }
}

/** The source mode of a Graphviz edge, from its `<title>from->to</title>`. */
function edgeFrom(edge: Element): string {
  const title = edge.querySelector(':scope > title')?.textContent ?? '';
  const arrow = title.lastIndexOf('->');
  return arrow >= 0 ? title.slice(0, arrow) : '';
}

/** The caption under the statechart: `idle → conversation by rule #0 (input_triggered): keyword "hello"`. */
export function transitionText(last: Transition | null, label: (mode: string) => string): string {
  if (!last) return 'No transition since WebSim started.';
  const rule = last.rule_index !== undefined ? ` by rule #${last.rule_index}` : '';
  const when = new Date(last.at).toLocaleTimeString();
  // A reason that already names its trigger (`manual: from WebSim`) is not prefixed twice.
  const why = last.reason === last.trigger || last.reason.startsWith(`${last.trigger}:`) ? last.reason : `(${last.trigger}): ${last.reason}`;
  return `Last transition ${when}: ${label(last.from)} → ${label(last.to)}${rule} ${why}`;
}
