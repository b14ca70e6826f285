// Zoom and pan of the statechart panel: the drawing at its natural size times a zoom, buttons, Ctrl + wheel, and dragging to pan.

const MIN = 0.25;
const MAX = 3;
/** The first zoom: the chart fitted to the panel, but never smaller than this (text stays readable; drag to see the rest). */
const READABLE = 0.75;

export interface Zoom {
  /** Fits the chart to the panel's width (at most 1:1). */
  fit(): void;
  set(scale: number): void;
  readonly scale: number;
}

/**
 * Sizes `svg` (which must have a viewBox) inside the scrolling `view`: width and height are the
 * viewBox's times the zoom, so text stays sharp at any zoom. `tools` holds buttons with `data-zoom`
 * = `in`, `out`, `fit` or `1`; `label` shows the zoom in percent.
 */
export function enableZoom(view: HTMLElement, svg: SVGSVGElement, tools: HTMLElement, label: HTMLElement): Zoom {
  const box = svg.viewBox.baseVal;
  const width = box && box.width > 0 ? box.width : svg.getBBox().width;
  const height = box && box.height > 0 ? box.height : svg.getBBox().height;
  let scale = 1;

  const apply = (next: number, around?: { x: number; y: number }) => {
    const old = scale;
    scale = Math.min(MAX, Math.max(MIN, next));
    // Keep the point under the pointer (or the centre) where it was.
    const rect = view.getBoundingClientRect();
    const px = around ? around.x - rect.left : view.clientWidth / 2;
    const py = around ? around.y - rect.top : view.clientHeight / 2;
    const cx = (view.scrollLeft + px) / old;
    const cy = (view.scrollTop + py) / old;
    svg.style.width = `${Math.round(width * scale)}px`;
    svg.style.height = `${Math.round(height * scale)}px`;
    view.scrollLeft = cx * scale - px;
    view.scrollTop = cy * scale - py;
    label.textContent = `${Math.round(scale * 100)}%`;
    view.dataset.zoom = scale.toFixed(2);
  };
  const fitScale = () => Math.min(1, Math.max(MIN, (view.clientWidth - 4) / width));

  tools.addEventListener('click', (e) => {
    const button = (e.target as HTMLElement).closest('button');
    const what = button?.dataset.zoom;
    if (what === 'in') apply(scale * 1.25);
    else if (what === 'out') apply(scale / 1.25);
    else if (what === 'fit') apply(fitScale());
    else if (what === '1') apply(1);
  });
  view.addEventListener(
    'wheel',
    (e) => {
      if (!e.ctrlKey && !e.metaKey) return;
      e.preventDefault();
      apply(scale * (e.deltaY < 0 ? 1.1 : 1 / 1.1), { x: e.clientX, y: e.clientY });
    },
    { passive: false },
  );
  let drag: { x: number; y: number; left: number; top: number } | null = null;
  view.addEventListener('pointerdown', (e) => {
    if (e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, left: view.scrollLeft, top: view.scrollTop };
    view.classList.add('dragging');
    view.setPointerCapture(e.pointerId);
  });
  view.addEventListener('pointermove', (e) => {
    if (!drag) return;
    view.scrollLeft = drag.left - (e.clientX - drag.x);
    view.scrollTop = drag.top - (e.clientY - drag.y);
  });
  const end = () => {
    drag = null;
    view.classList.remove('dragging');
  };
  view.addEventListener('pointerup', end);
  view.addEventListener('pointercancel', end);

  apply(Math.max(READABLE, fitScale()));
  return {
    fit: () => apply(fitScale()),
    set: (s) => apply(s),
    get scale() {
      return scale;
    },
  };
}
