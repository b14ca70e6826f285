// Cuts a document into passages by heading and paragraph: each passage knows the headings above it, short paragraphs are joined, long ones split.
import { basename, extname } from 'node:path';

/** One passage of a document, as indexed and as given to the prompt. */
export interface Chunk {
  /** The headings above it, outermost first, joined with ` > ` ('' before the first heading). */
  heading: string;
  text: string;
}

/** Paragraphs shorter than this are joined with the next one under the same heading. */
const MIN_CHARS = 160;
/** A passage never grows past this by joining; a longer paragraph is split at sentence ends. */
const MAX_CHARS = 900;

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
/** A line of `===` or `---` under a line of text makes that line a heading (Markdown's setext form). */
const SETEXT = /^(=+|-+)\s*$/;

/** A document's title: its first level-1 heading, else its file name without extension, `_` and `-` read as spaces. */
export function titleOf(path: string, text: string): string {
  const h1 = /^#\s+(.+?)\s*#*\s*$/m.exec(text);
  if (h1?.[1]) return h1[1];
  return basename(path, extname(path)).replace(/[_-]+/g, ' ').trim();
}

/** Splits a long paragraph at sentence ends into pieces of at most MAX_CHARS (a sentence longer than that is cut). */
function splitLong(text: string): string[] {
  if (text.length <= MAX_CHARS) return [text];
  const sentences = text.match(/[^.!?]+(?:[.!?]+["')\]]*\s*|$)/g) ?? [text];
  const out: string[] = [];
  let cur = '';
  for (const s of sentences) {
    if (cur && cur.length + s.length > MAX_CHARS) {
      out.push(cur.trim());
      cur = '';
    }
    cur += s;
    while (cur.length > MAX_CHARS) {
      out.push(cur.slice(0, MAX_CHARS).trim());
      cur = cur.slice(MAX_CHARS);
    }
  }
  if (cur.trim()) out.push(cur.trim());
  return out;
}

/**
 * The passages of a Markdown or text document. Headings (`#`..`######`, or setext underlines) open a
 * section; blank lines end a paragraph; a code fence is one paragraph. Paragraphs under one heading
 * are joined while shorter than MIN_CHARS and the result stays under MAX_CHARS.
 */
export function chunkDocument(text: string): Chunk[] {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  const path: string[] = [];
  const chunks: Chunk[] = [];
  let para: string[] = [];
  let pending: { heading: string; text: string } | undefined;
  let fence = false;

  const heading = () => path.filter(Boolean).join(' > ');
  const emit = (body: string) => {
    const h = heading();
    if (pending && pending.heading === h && pending.text.length < MIN_CHARS && pending.text.length + body.length < MAX_CHARS) {
      pending.text = `${pending.text}\n\n${body}`;
      return;
    }
    if (pending) chunks.push(pending);
    pending = { heading: h, text: body };
  };
  const endParagraph = () => {
    const body = para.join('\n').trim();
    para = [];
    if (!body) return;
    for (const piece of splitLong(body)) emit(piece);
  };
  const flushSection = () => {
    endParagraph();
    if (pending) chunks.push(pending);
    pending = undefined;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (/^\s*(```|~~~)/.test(line)) {
      fence = !fence;
      para.push(line);
      continue;
    }
    if (fence) {
      para.push(line);
      continue;
    }
    const atx = HEADING.exec(line);
    const next = lines[i + 1];
    const setext = !atx && line.trim() && para.length === 0 && next !== undefined && SETEXT.test(next) && !/^\s*$/.test(line);
    if (atx || setext) {
      flushSection();
      const level = atx ? atx[1]!.length : next!.startsWith('=') ? 1 : 2;
      path.length = Math.min(path.length, level - 1);
      while (path.length < level - 1) path.push('');
      path.push(atx ? atx[2]! : line.trim());
      if (setext) i++;
      continue;
    }
    if (!line.trim()) endParagraph();
    else para.push(line);
  }
  flushSection();
  return chunks;
}
