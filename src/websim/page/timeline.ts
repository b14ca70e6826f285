// The timeline panel: model calls and actions of the last minute as bars on a time axis, and the list of model calls with latency and CU.
import { svgEl } from './svg.js';
import { actionText, h } from './panels.js';
import type { SimState } from './state.js';

/** The time the axis shows, ending now. */
export const WINDOW_MS = 60_000;
const LEFT = 92;
const ROW = 22;
const TOP = 18;
/** Rows of actions drawn at most (the newest labels). */
const MAX_ROWS = 6;

const el = (tag: string, attrs: Record<string, string | number>, text?: string): SVGElement => svgEl(tag, attrs, undefined, text);

const seconds = (ms: number) => (ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);

/**
 * Draws the last WINDOW_MS up to `now`: one row of model calls (a bar from request to answer, so its
 * length is the latency; a failed call is a red mark) and one row per action label (queued or running
 * to its end; a running command reaches now). Each bar has a tooltip with the details.
 */
export function renderTimeline(box: HTMLElement, s: SimState, now: number): void {
  const width = Math.max(320, box.clientWidth || 600);
  const t0 = now - WINDOW_MS;
  const x = (t: number) => LEFT + ((Math.max(t0, Math.min(now, t)) - t0) / WINDOW_MS) * (width - LEFT - 8);
  const recent = s.actions.filter((a) => (a.ended_at ?? now) >= t0);
  const labels = [...new Set(recent.map((a) => a.label))].slice(0, MAX_ROWS);
  const rows = ['model', ...labels];
  const height = TOP + rows.length * ROW + 4;
  const svg = el('svg', { viewBox: `0 0 ${width} ${height}`, width, height, role: 'img' }) as SVGSVGElement;
  for (let sec = 0; sec <= WINDOW_MS / 1000; sec += 10) {
    const at = t0 + sec * 1000;
    svg.append(el('line', { x1: x(at), x2: x(at), y1: TOP - 4, y2: height, class: 'axis' }));
    svg.append(
      el('text', { x: x(at), y: 11, 'text-anchor': 'middle', class: 'tick-label' }, sec === WINDOW_MS / 1000 ? 'now' : `-${WINDOW_MS / 1000 - sec} s`),
    );
  }
  rows.forEach((row, i) => svg.append(el('text', { x: 4, y: TOP + i * ROW + 15, class: 'row-label' }, row === 'model' ? 'model calls' : row)));
  for (const c of s.calls) {
    if (c.at < t0) continue;
    const start = c.at - c.latency_ms;
    const bar = el('rect', {
      x: x(start),
      y: TOP + 4,
      width: Math.max(3, x(c.at) - x(start)),
      height: ROW - 8,
      rx: 2,
      class: `bar-model${c.ok ? '' : ' failed'}`,
    });
    bar.append(
      el(
        'title',
        {},
        `${new Date(c.at).toLocaleTimeString()} · ${c.mode} tick ${c.tick} · ${c.model} · ${c.ok ? `${c.latency_ms} ms` : 'failed'}${c.cost_cu !== undefined ? ` · ${c.cost_cu} CU` : ''} · ${c.summary}`,
      ),
    );
    svg.append(bar);
  }
  for (const a of recent) {
    const row = labels.indexOf(a.label);
    if (row < 0) continue;
    const start = a.started_at ?? a.queued_at ?? a.at;
    const end = a.ended_at ?? now;
    const bar = el('rect', {
      x: x(start),
      y: TOP + (row + 1) * ROW + 4,
      width: Math.max(3, x(end) - x(start)),
      height: ROW - 8,
      rx: 2,
      class: `bar-action ${a.state}`,
    });
    bar.append(el('title', {}, `${a.label} ${a.state}: ${actionText(a.value)} (${seconds(end - start)})${a.error ? ` — ${a.error}` : ''}`));
    svg.append(bar);
  }
  box.replaceChildren(svg);
}

/** The model calls, newest first: time, mode and tick, model, latency, CU, what it answered (or why it failed). */
export function renderCalls(list: HTMLElement, s: SimState): void {
  if (s.calls.length === 0) return list.replaceChildren(h('li', 'note', 'no model call yet'));
  list.replaceChildren(
    ...s.calls.map((c) => {
      const li = h(
        'li',
        c.ok ? null : 'bad',
        h('span', 'time', new Date(c.at).toLocaleTimeString()),
        `${c.mode} #${c.tick} · ${c.model} · ${c.ok ? `${c.latency_ms} ms` : 'failed'}${c.cost_cu !== undefined ? ` · ${c.cost_cu} CU` : ''} · `,
        h('span', 'call', c.summary),
      );
      li.dataset.latency = String(c.latency_ms);
      return li;
    }),
  );
}
