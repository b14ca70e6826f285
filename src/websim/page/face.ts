// The avatar panel: a simple SVG face per emotion of the `face` action, drawn with DOM calls (no markup from data).
import { svgEl } from './svg.js';

interface FaceShape {
  /** Face fill colour. */
  skin: string;
  /** Mouth path in a 200x200 box. */
  mouth: string;
  /** Eye radius (x, y); a small y makes a squint. */
  eye: [number, number];
  /** Left and right brow paths; empty for none. */
  brows: [string, string];
  /** Extra marks (a thought bubble, a question mark), as [tag, attributes]. */
  extras?: Array<[string, Record<string, string>]>;
}

const FLAT_BROWS: [string, string] = ['', ''];

/** One shape per emotion of the built-in face action; unknown emotions fall back to neutral with their name shown. */
export const FACES: Record<string, FaceShape> = {
  neutral: { skin: '#fde68a', mouth: 'M70 135 L130 135', eye: [9, 9], brows: FLAT_BROWS },
  joy: { skin: '#fcd34d', mouth: 'M60 120 Q100 175 140 120 Z', eye: [10, 6], brows: ['M55 62 Q70 50 85 60', 'M115 60 Q130 50 145 62'] },
  smile: { skin: '#fde68a', mouth: 'M65 125 Q100 155 135 125', eye: [9, 9], brows: FLAT_BROWS },
  think: {
    skin: '#fde68a',
    mouth: 'M80 138 Q100 130 125 136',
    eye: [8, 8],
    brows: ['M55 66 L85 60', 'M115 56 L145 50'],
    extras: [
      ['circle', { cx: '165', cy: '35', r: '12', fill: '#e5e7eb', stroke: '#9ca3af' }],
      ['circle', { cx: '150', cy: '58', r: '5', fill: '#e5e7eb', stroke: '#9ca3af' }],
    ],
  },
  confused: {
    skin: '#fde68a',
    mouth: 'M70 140 Q85 128 100 140 Q115 152 130 140',
    eye: [9, 9],
    brows: ['M55 58 L85 66', 'M115 62 L145 56'],
    extras: [['text', { x: '160', y: '55', 'font-size': '34', fill: '#6b7280', 'font-family': 'sans-serif' }]],
  },
  sad: { skin: '#bfdbfe', mouth: 'M65 148 Q100 118 135 148', eye: [8, 8], brows: ['M55 60 L85 52', 'M115 52 L145 60'] },
  surprised: {
    skin: '#fde68a',
    mouth: 'M100 140 m-14 0 a14 18 0 1 0 28 0 a14 18 0 1 0 -28 0',
    eye: [11, 11],
    brows: ['M55 52 Q70 40 85 50', 'M115 50 Q130 40 145 52'],
  },
  curious: { skin: '#fde68a', mouth: 'M75 135 Q100 148 125 132', eye: [9, 11], brows: ['M55 62 L85 62', 'M115 52 Q130 44 145 54'] },
};

const el = (tag: string, attrs: Record<string, string>): SVGElement => svgEl(tag, attrs);

/** Replaces the content of `container` with the face for `emotion` (null: no face command yet). */
export function drawFace(container: HTMLElement, emotion: string | null): void {
  const known = emotion !== null && Object.hasOwn(FACES, emotion);
  const shape = FACES[known ? emotion : 'neutral']!;
  const svg = el('svg', { viewBox: '0 0 200 200', role: 'img', 'aria-label': `face: ${emotion ?? 'none yet'}` });
  svg.dataset.emotion = emotion ?? '';
  svg.append(el('circle', { cx: '100', cy: '100', r: '90', fill: emotion === null ? '#e5e7eb' : shape.skin, stroke: '#92400e', 'stroke-width': '3' }));
  for (const cx of ['70', '130']) {
    svg.append(el('ellipse', { cx, cy: '88', rx: String(shape.eye[0]), ry: String(shape.eye[1]), fill: '#1f2937' }));
  }
  for (const d of shape.brows) if (d) svg.append(el('path', { d, fill: 'none', stroke: '#78350f', 'stroke-width': '4', 'stroke-linecap': 'round' }));
  const closed = shape.mouth.endsWith('Z') || shape.mouth.includes(' a');
  svg.append(
    el('path', {
      d: shape.mouth,
      fill: closed ? '#7f1d1d' : 'none',
      stroke: '#7f1d1d',
      'stroke-width': '5',
      'stroke-linecap': 'round',
      'stroke-linejoin': 'round',
    }),
  );
  if (emotion === 'sad') svg.append(el('path', { d: 'M62 100 q-4 10 0 14 q4 -4 0 -14', fill: '#60a5fa' }));
  for (const [tag, attrs] of shape.extras ?? []) {
    const extra = el(tag, attrs);
    if (tag === 'text') extra.textContent = '?';
    svg.append(extra);
  }
  if (emotion !== null && !known) {
    const label = el('text', { x: '100', y: '192', 'text-anchor': 'middle', 'font-size': '14', fill: '#374151' });
    label.textContent = emotion;
    svg.append(label);
  }
  container.replaceChildren(svg);
}
