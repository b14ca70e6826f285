// The lidar panel: the newest scan around the robot (forward up), OM1's free paths and the guard's distances, drawn as SVG with DOM calls.
import { svgEl } from './svg.js';
import type { LidarView } from './state.js';

/** Drawing size in px; the view spans SPAN_M metres across. */
const SIZE = 300;
const SPAN_M = 5;

const el = (tag: string, attrs: Record<string, string>, parent: Element): SVGElement => svgEl(tag, attrs, parent);

/** Draws `scan` into `into` (hidden without a lidar): returns as dots, paths as green (free) or red (blocked) corridors, the guard's stop and slow circles. */
export function renderLidar(section: HTMLElement, into: HTMLElement, facts: HTMLElement, scan: LidarView | null): void {
  section.hidden = scan === null;
  if (!scan) return;
  const scale = SIZE / SPAN_M;
  const c = SIZE / 2;
  // Robot frame (forward, right) in metres to the page: forward is up, right is right.
  const px = (right: number) => (c + right * scale).toFixed(1);
  const py = (fwd: number) => (c - fwd * scale).toFixed(1);
  into.replaceChildren();
  const svg = el(
    'svg',
    {
      viewBox: `0 0 ${SIZE} ${SIZE}`,
      width: String(SIZE),
      height: String(SIZE),
      role: 'img',
      'aria-label': 'the lidar: returns around the robot and its free paths',
    },
    into,
  );
  el('rect', { x: '0', y: '0', width: String(SIZE), height: String(SIZE), fill: '#0f172a' }, svg);
  for (let m = 1; m <= SPAN_M / 2; m++) el('circle', { cx: String(c), cy: String(c), r: String(m * scale), fill: 'none', stroke: '#334155' }, svg);
  if (scan.guard) {
    el(
      'circle',
      { cx: String(c), cy: String(c), r: String(scan.guard.slow_m * scale), fill: 'none', stroke: '#f59e0b', 'stroke-dasharray': '4 3', class: 'lidar-slow' },
      svg,
    );
    el(
      'circle',
      { cx: String(c), cy: String(c), r: String(scan.guard.stop_m * scale), fill: 'none', stroke: '#ef4444', 'stroke-dasharray': '4 3', class: 'lidar-stop' },
      svg,
    );
  }
  for (const p of scan.paths) {
    const rad = (p.deg * Math.PI) / 180;
    const fwd = scan.path_m * Math.cos(rad);
    const right = scan.path_m * Math.sin(rad);
    el(
      'line',
      {
        x1: px(0),
        y1: py(0),
        x2: px(right),
        y2: py(fwd),
        stroke: p.free ? '#22c55e' : '#ef4444',
        'stroke-width': String(Math.max(2, scan.half_width_m * 2 * scale)),
        'stroke-opacity': '0.35',
        'stroke-linecap': 'round',
        class: p.free ? 'lidar-path free' : 'lidar-path blocked',
        'data-deg': String(p.deg),
      },
      svg,
    );
  }
  const dots = el('g', { class: 'lidar-points', fill: '#38bdf8' }, svg);
  for (const [fwd, right] of scan.points) el('circle', { cx: px(right / 100), cy: py(fwd / 100), r: '1.6' }, dots);
  // The robot: a triangle pointing forward (up).
  el('polygon', { points: `${c},${c - 9} ${c - 7},${c + 7} ${c + 7},${c + 7}`, fill: '#f8fafc', stroke: '#0f172a', class: 'lidar-robot' }, svg);
  const free = scan.paths.filter((p) => p.free).map((p) => `${p.deg}°`);
  const rows: Array<[string, string]> = [
    ['source', scan.source],
    ['returns', String(scan.points.length)],
    ['ahead', scan.ahead_m === null ? 'clear' : `${scan.ahead_m} m`],
    ['free paths', free.length ? free.join(' ') : 'none'],
  ];
  if (scan.guard) rows.push(['guard', `stop ${scan.guard.stop_m} m, slow ${scan.guard.slow_m} m`]);
  rows.push(['scan', new Date(scan.at).toLocaleTimeString()]);
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
