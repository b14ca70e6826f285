// SVG of the mode statechart without a browser or network: Graphviz `dot` when installed, else an elkjs layout drawn here.
import { spawn } from 'node:child_process';
import type { ELK as ElkApi, ElkNode } from 'elkjs/lib/elk-api.js';
import type { AgentConfig } from '../config/schema.js';
import { CortexError } from '../errors.js';
import { ANY_MODE, DOT_ANY, drawnEdges, edgeLabelLines, legendLines, modeLabel, toDot, wrapText } from './graph.js';

/** Rendering failed (dot crashed, timed out, or produced no SVG). */
export class GraphRenderError extends CortexError {
  constructor(message: string) {
    super('graph_render_failed', message);
    this.name = 'GraphRenderError';
  }
}

export interface SvgOptions {
  /** The Graphviz program; default `$CORTEX_DOT` or `dot` on PATH. `false` forces the elkjs renderer. */
  dot?: string | false;
  signal?: AbortSignal;
  /** Limit for one `dot` run; default 15 s. */
  timeoutMs?: number;
}

/** Which renderer produced an SVG. */
export interface SvgResult {
  svg: string;
  renderer: 'graphviz' | 'elkjs';
}

class DotMissing extends Error {}

/** Runs `dot -Tsvg` on `source`; rejects with DotMissing when the program does not exist. */
export function runDot(program: string, source: string, signal?: AbortSignal, timeoutMs = 15_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, ['-Tsvg'], { stdio: ['pipe', 'pipe', 'pipe'], signal, timeout: timeoutMs, killSignal: 'SIGKILL' });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-2000)));
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code === 'ENOENT') reject(new DotMissing(program));
      else reject(new GraphRenderError(`${program} failed: ${e.message}`));
    });
    child.stdin.on('error', () => {
      /* reported through 'close' */
    });
    child.on('close', (code, sig) => {
      if (code === 0 && out.includes('<svg')) resolve(out);
      else if (code !== null || sig) reject(new GraphRenderError(`${program} -Tsvg ${sig ? `was killed (${sig})` : `exited with ${code}`}: ${err.trim()}`));
    });
    child.stdin.end(source);
  });
}

/**
 * elkjs (a large bundle) is loaded only when Graphviz is missing. It is CommonJS: its constructor is
 * the module itself or its `default`, depending on the loader.
 */
async function loadElk(): Promise<new () => ElkApi> {
  const { default: ElkModule } = await import('elkjs/lib/elk.bundled.js');
  return ((ElkModule as unknown as { default?: unknown }).default ?? ElkModule) as new () => ElkApi;
}

const CHAR_W = 7;
const LINE_H = 16;
const xml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** Widest drawing, in CSS pixels, that is drawn with full rule labels; a wider one is drawn compact with a legend. */
export const MAX_WIDTH_PX = 1600;
const LEGEND_FONT = 13;
const LEGEND_LINE = 18;
const LEGEND_CHAR_W = 7.2;
/** Characters per legend line before it wraps (about 950 px). */
const LEGEND_WRAP = 140;

/** A drawing of the statechart: SVG elements and their size in pixels. */
interface Drawing {
  body: string;
  width: number;
  height: number;
}

/** The legend of a compact chart: one line per drawn rule, long ones wrapped and indented; texts start with `#<rule>` like edge labels. */
function legend(config: AgentConfig, top: number): Drawing {
  const rows: string[] = [];
  let y = top + LEGEND_LINE;
  let width = 0;
  rows.push(`<text x="0" y="${y}" font-size="${LEGEND_FONT + 1}" font-weight="bold">Rules (the numbers on the arrows)</text>`);
  for (const line of legendLines(config)) {
    wrapText(line, LEGEND_WRAP).forEach((part, i) => {
      y += LEGEND_LINE;
      const x = i === 0 ? 0 : 24;
      width = Math.max(width, x + part.length * LEGEND_CHAR_W);
      rows.push(`<text x="${x}" y="${y}" font-size="${LEGEND_FONT}"${i === 0 ? ' class="rule"' : ''}>${xml(part)}</text>`);
    });
  }
  return { body: `<g class="legend">\n${rows.join('\n')}\n</g>`, width: Math.ceil(width), height: y - top + 6 };
}

/** The document around a drawing, with the legend below it when there is one. */
function frame(config: AgentConfig, drawing: Drawing, withLegend: boolean): string {
  const pad = 10;
  const extra = withLegend ? legend(config, drawing.height + pad) : undefined;
  const width = Math.ceil(Math.max(drawing.width, extra?.width ?? 0) + 2 * pad);
  const height = Math.ceil(drawing.height + (extra ? extra.height + pad : 0) + 2 * pad);
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="${-pad} ${-pad} ${width} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<title>${xml(config.name)}</title>`,
    drawing.body,
    extra?.body ?? '',
    '</svg>',
    '',
  ].join('\n');
}

/** Graphviz's SVG as a drawing: its document nested at the origin, sized in pixels (Graphviz measures in points). */
function graphvizDrawing(svg: string): Drawing {
  const open = /<svg\b[^>]*>/.exec(svg);
  const size = open && /width="([\d.]+)pt"\s+height="([\d.]+)pt"/.exec(open[0]);
  if (!open || !size) throw new GraphRenderError('dot produced an SVG without a size');
  const width = Math.ceil((Number(size[1]) * 4) / 3);
  const height = Math.ceil((Number(size[2]) * 4) / 3);
  const tag = open[0].replace(/\swidth="[^"]*"/, ` x="0" y="0" width="${width}"`).replace(/\sheight="[^"]*"/, ` height="${height}"`);
  const body = tag + svg.slice(open.index + open[0].length, svg.lastIndexOf('</svg>') + '</svg>'.length);
  return { body, width, height };
}

/** Lays the statechart out with elkjs (layered; left to right, or top to bottom when compact) and draws it. */
async function elkDrawing(config: AgentConfig, compact: boolean): Promise<Drawing> {
  const elk = new (await loadElk())();
  const names = Object.keys(config.modes);
  const edges = drawnEdges(config);
  const nodeIds = [...names.map((n) => `m:${n}`), ...(edges.some((e) => e.from === ANY_MODE) ? [`m:${DOT_ANY}`] : [])];
  const linesOf = (id: string) => (id === `m:${DOT_ANY}` ? ['any mode'] : modeLabel(id.slice(2), config));
  const graph: ElkNode = await elk.layout({
    id: 'root',
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': compact ? 'DOWN' : 'RIGHT',
      'elk.spacing.nodeNode': '40',
      'elk.layered.spacing.nodeNodeBetweenLayers': compact ? '50' : '80',
      'elk.edgeLabels.inline': 'false',
    },
    children: nodeIds.map((id) => {
      const lines = linesOf(id);
      return { id, width: Math.max(...lines.map((l) => l.length)) * CHAR_W + 24, height: lines.length * LINE_H + 16 };
    }),
    edges: edges.map((e, i) => {
      const lines = edgeLabelLines(e, compact);
      const from = e.from === ANY_MODE ? `m:${DOT_ANY}` : `m:${e.from}`;
      return {
        id: `e${i}`,
        sources: [from],
        targets: [`m:${e.to}`],
        labels: [{ id: `l${i}`, text: lines.join('\n'), width: Math.max(...lines.map((l) => l.length)) * 7, height: lines.length * 15 + 2 }],
      };
    }),
  });
  const parts: string[] = [];
  for (const node of graph.children ?? []) {
    const lines = linesOf(node.id);
    const x = node.x ?? 0;
    const y = node.y ?? 0;
    const initial = node.id === `m:${config.default_mode}`;
    const dashed = node.id === `m:${DOT_ANY}` ? ' stroke-dasharray="5 3"' : '';
    parts.push(
      `<g class="mode" id="${xml(node.id)}"><rect x="${x}" y="${y}" width="${node.width}" height="${node.height}" rx="8" fill="#fff" stroke="#333" stroke-width="${initial ? 2.5 : 1}"${dashed}/>`,
    );
    lines.forEach((l, i) =>
      parts.push(`<text x="${x + (node.width ?? 0) / 2}" y="${y + 20 + i * LINE_H}" text-anchor="middle" font-size="13">${xml(l)}</text>`),
    );
    parts.push('</g>');
  }
  for (const edge of graph.edges ?? []) {
    for (const s of edge.sections ?? []) {
      const pts = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint].map((p) => `${p.x},${p.y}`).join(' ');
      parts.push(`<polyline points="${pts}" fill="none" stroke="#555" marker-end="url(#arrow)"/>`);
    }
    for (const label of edge.labels ?? []) {
      (label.text ?? '')
        .split('\n')
        .forEach((l, i) => parts.push(`<text x="${label.x ?? 0}" y="${(label.y ?? 0) + 12 + i * 15}" font-size="12" fill="#222">${xml(l)}</text>`));
    }
  }
  const defs = `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>`;
  return { body: [defs, ...parts].join('\n'), width: graph.width ?? 0, height: graph.height ?? 0 };
}

/** Draws the statechart with elkjs: full labels when that fits MAX_WIDTH_PX, else compact with a legend. */
export async function elkSvg(config: AgentConfig): Promise<string> {
  const full = await elkDrawing(config, false);
  if (full.width + 20 <= MAX_WIDTH_PX) return frame(config, full, false);
  return frame(config, await elkDrawing(config, true), true);
}

/**
 * Renders the statechart as SVG. Uses Graphviz when its `dot` program exists (best layout of edge
 * labels); when it is absent, falls back to the in-process elkjs layout. A `dot` that exists but
 * fails is an error, not a silent fallback. A chart that would be wider than MAX_WIDTH_PX with full
 * labels is drawn top to bottom with rule numbers on the arrows and a legend of the rules below, so
 * it fits a screen at a readable size.
 */
export async function renderSvg(config: AgentConfig, options: SvgOptions = {}): Promise<SvgResult> {
  const program = options.dot === undefined ? (process.env.CORTEX_DOT ?? 'dot') : options.dot;
  if (program !== false) {
    try {
      const full = graphvizDrawing(await runDot(program, toDot(config), options.signal, options.timeoutMs));
      if (full.width + 20 <= MAX_WIDTH_PX) return { svg: frame(config, full, false), renderer: 'graphviz' };
      const compact = graphvizDrawing(await runDot(program, toDot(config, { compact: true }), options.signal, options.timeoutMs));
      return { svg: frame(config, compact, true), renderer: 'graphviz' };
    } catch (err) {
      if (!(err instanceof DotMissing)) throw err;
    }
  }
  return { svg: await elkSvg(config), renderer: 'elkjs' };
}
