// SVG of the mode statechart without a browser or network: Graphviz `dot` when installed, else an elkjs layout drawn here.
import { spawn } from 'node:child_process';
import type { ELK as ElkApi, ElkNode } from 'elkjs/lib/elk-api.js';
import type { AgentConfig } from '../config/schema.js';
import { CortexError } from '../errors.js';
import { modeEdges, modeLabel, toDot } from './graph.js';

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

/** Lays the statechart out with elkjs (layered, left to right) and draws it as SVG. */
export async function elkSvg(config: AgentConfig): Promise<string> {
  const elk = new (await loadElk())();
  const names = Object.keys(config.modes);
  const edges = modeEdges(config);
  const graph: ElkNode = await elk.layout({
    id: 'root',
    layoutOptions: { 'elk.algorithm': 'layered', 'elk.direction': 'RIGHT', 'elk.spacing.nodeNode': '40', 'elk.layered.spacing.nodeNodeBetweenLayers': '80', 'elk.edgeLabels.inline': 'false' },
    children: names.map((name) => {
      const lines = modeLabel(name, config);
      return { id: `m:${name}`, width: Math.max(...lines.map((l) => l.length)) * CHAR_W + 24, height: lines.length * LINE_H + 16 };
    }),
    edges: edges.map((e, i) => {
      const text = `#${e.ruleIndex} ${e.label}`;
      return { id: `e${i}`, sources: [`m:${e.from}`], targets: [`m:${e.to}`], labels: [{ id: `l${i}`, text, width: text.length * 6, height: 14 }] };
    }),
  });
  const parts: string[] = [];
  for (const node of graph.children ?? []) {
    const name = node.id.slice(2);
    const lines = modeLabel(name, config);
    const x = node.x ?? 0;
    const y = node.y ?? 0;
    const initial = name === config.default_mode;
    parts.push(`<g class="mode" id="${xml(node.id)}"><rect x="${x}" y="${y}" width="${node.width}" height="${node.height}" rx="8" fill="#fff" stroke="#333" stroke-width="${initial ? 2.5 : 1}"/>`);
    lines.forEach((l, i) => parts.push(`<text x="${x + (node.width ?? 0) / 2}" y="${y + 20 + i * LINE_H}" text-anchor="middle" font-size="12">${xml(l)}</text>`));
    parts.push('</g>');
  }
  for (const edge of graph.edges ?? []) {
    for (const s of edge.sections ?? []) {
      const pts = [s.startPoint, ...(s.bendPoints ?? []), s.endPoint].map((p) => `${p.x},${p.y}`).join(' ');
      parts.push(`<polyline points="${pts}" fill="none" stroke="#555" marker-end="url(#arrow)"/>`);
    }
    for (const label of edge.labels ?? []) {
      parts.push(`<text x="${label.x ?? 0}" y="${(label.y ?? 0) + 11}" font-size="10" fill="#222">${xml(label.text ?? '')}</text>`);
    }
  }
  const width = (graph.width ?? 0) + 20;
  const height = (graph.height ?? 0) + 20;
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="-10 -10 ${width} ${height}" font-family="Helvetica, Arial, sans-serif">`,
    `<title>${xml(config.name)}</title>`,
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="8" markerHeight="8" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#555"/></marker></defs>`,
    ...parts,
    '</svg>',
    '',
  ].join('\n');
}

/**
 * Renders the statechart as SVG. Uses Graphviz when its `dot` program exists (best layout of edge
 * labels); when it is absent, falls back to the in-process elkjs layout. A `dot` that exists but
 * fails is an error, not a silent fallback.
 */
export async function renderSvg(config: AgentConfig, options: SvgOptions = {}): Promise<SvgResult> {
  const program = options.dot === undefined ? (process.env.CORTEX_DOT ?? 'dot') : options.dot;
  if (program !== false) {
    try {
      return { svg: await runDot(program, toDot(config), options.signal, options.timeoutMs), renderer: 'graphviz' };
    } catch (err) {
      if (!(err instanceof DotMissing)) throw err;
    }
  }
  return { svg: await elkSvg(config), renderer: 'elkjs' };
}
