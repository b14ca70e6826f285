// Makes an SVG element with DOM calls (attributes set one by one, text as textContent), so no markup is ever built from data.
const SVG_NS = 'http://www.w3.org/2000/svg';

/** A new `tag` element with `attrs`, appended to `parent` when given, with `text` as its text when given. */
export function svgEl(tag: string, attrs: Record<string, string | number>, parent?: Element, text?: string): SVGElement {
  const e = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  parent?.appendChild(e);
  return e;
}
