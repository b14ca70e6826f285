// The body panel: the robot's pose, heading and path from BodyInput's context values, drawn as SVG with DOM calls (no markup from data).
import { svgEl } from './svg.js';
import type { BodyView, SimState } from './state.js';

/** Drawing size in px; the view fits the path with at least this many metres around the robot. */
const SIZE = 240;
const MIN_SPAN_M = 4;

const el = (tag: string, attrs: Record<string, string>, parent: Element): SVGElement => svgEl(tag, attrs, parent);

/** Metres to drawing coordinates: x to the right, y up (the page's y grows down), one scale for both. */
export function viewOf(body: BodyView): { scale: number; cx: number; cy: number } {
  const xs = [...body.path.map((p) => p[0]), body.x];
  const ys = [...body.path.map((p) => p[1]), body.y];
  const minX = Math.min(...xs);
  const maxX = Math.max(...xs);
  const minY = Math.min(...ys);
  const maxY = Math.max(...ys);
  const span = Math.max(MIN_SPAN_M, maxX - minX + 1, maxY - minY + 1);
  return { scale: SIZE / span, cx: (minX + maxX) / 2, cy: (minY + maxY) / 2 };
}

/** Draws the body into `into`: a metre grid, the path, the robot as an arrow at its heading; the numbers below. */
export function renderBody(section: HTMLElement, into: HTMLElement, facts: HTMLElement, s: SimState): void {
  const body = s.body;
  section.hidden = body === null;
  if (!body) return;
  const { scale, cx, cy } = viewOf(body);
  const px = (x: number) => SIZE / 2 + (x - cx) * scale;
  const py = (y: number) => SIZE / 2 - (y - cy) * scale;
  into.replaceChildren();
  const svg = el(
    'svg',
    { viewBox: `0 0 ${SIZE} ${SIZE}`, width: String(SIZE), height: String(SIZE), role: 'img', 'aria-label': 'the robot body: path and pose' },
    into,
  );
  el('rect', { x: '0', y: '0', width: String(SIZE), height: String(SIZE), fill: '#f8fafc', stroke: '#cbd5e1' }, svg);
  // A line every metre.
  const half = SIZE / 2 / scale;
  for (let m = Math.ceil(cx - half); m <= cx + half; m++)
    el('line', { x1: String(px(m)), y1: '0', x2: String(px(m)), y2: String(SIZE), stroke: m === 0 ? '#94a3b8' : '#e2e8f0' }, svg);
  for (let m = Math.ceil(cy - half); m <= cy + half; m++)
    el('line', { x1: '0', y1: String(py(m)), x2: String(SIZE), y2: String(py(m)), stroke: m === 0 ? '#94a3b8' : '#e2e8f0' }, svg);
  if (body.path.length > 1) {
    const points = body.path.map(([x, y]) => `${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(' ');
    el('polyline', { points, fill: 'none', stroke: '#2563eb', 'stroke-width': '2', 'stroke-linejoin': 'round', class: 'body-path' }, svg);
  }
  const [sx, sy] = body.path[0] ?? [body.x, body.y];
  el('circle', { cx: String(px(sx)), cy: String(py(sy)), r: '4', fill: '#94a3b8', class: 'body-start' }, svg);
  // The robot: an arrow pointing along its heading (degrees counter-clockwise from +x; SVG rotates clockwise).
  const robot = el('g', { transform: `translate(${px(body.x).toFixed(1)} ${py(body.y).toFixed(1)}) rotate(${-body.heading})`, class: 'body-robot' }, svg);
  el('polygon', { points: '14,0 -9,-9 -4,0 -9,9', fill: '#dc2626', stroke: '#7f1d1d', 'stroke-width': '1.5' }, robot);
  const rows: Array<[string, string]> = [
    ['x, y', `${body.x} m, ${body.y} m`],
    ['heading', `${body.heading}°`],
  ];
  if (body.distance !== undefined) rows.push(['travelled', `${body.distance} m`]);
  if (body.battery !== undefined) rows.push(['battery', `${Math.floor(body.battery)}%`]);
  facts.replaceChildren(
    ...rows.flatMap(([k, v]) => {
      const dt = document.createElement('dt');
      dt.textContent = k;
      const dd = document.createElement('dd');
      dd.textContent = v;
      return [dt, dd];
    }),
  );
}
