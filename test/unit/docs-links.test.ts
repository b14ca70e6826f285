// Proves the docs hold together: README.md stays a short map, every relative link of README.md, QUICKSTART.md and docs/*.md reaches a file and a heading.
import t from 'tap';
import { ALL_PAGES, DOCS_ROOT } from '../helpers/docs-pages.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = DOCS_ROOT;
const README_MAX_LINES = 250;

/** The pages checked: the README, the quickstart and every topic page. */
const PAGES = ALL_PAGES;

/** The lines of a Markdown text outside fenced code blocks (``` or ~~~), with their line numbers. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split('\n').forEach((raw, i) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(raw)?.[1];
    if (fence) {
      if (open && open[0] === fence[0] && open.length >= fence.length && raw.trim() === open) fence = undefined;
      return;
    }
    if (open) {
      fence = open;
      return;
    }
    out.push({ line: i + 1, text: raw });
  });
  return out;
}

/** GitHub's anchor for a heading's text: lower case, punctuation dropped (letters, digits, `_`, `-` and spaces kept), spaces as hyphens. */
function slug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1') // a link in a heading keeps its text
    .replace(/<[^>]+>/g, '') // inline HTML
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: its ATX headings' slugs, numbered -1, -2… on repeats as GitHub does. */
function anchorsOf(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const { text } of proseLines(readFileSync(file, 'utf8'))) {
    const h = /^ {0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(text);
    if (!h) continue;
    const base = slug(h[1] ?? '');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

interface Link {
  line: number;
  target: string;
}

/** The inline links and images of a page (`[text](target)`), outside code blocks and code spans; absolute URLs and mail addresses left out. */
function relativeLinks(text: string): Link[] {
  const links: Link[] = [];
  for (const { line, text: raw } of proseLines(text)) {
    const prose = raw.replace(/(`+)[^`]*?\1/g, '');
    for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
      const target = m[1] ?? '';
      if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
      links.push({ line, target });
    }
  }
  return links;
}

t.test(`README.md is a map of at most ${README_MAX_LINES} lines`, async (t) => {
  const text = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const lines = text.trimEnd().split('\n').length;
  t.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines`);
  // The two commands CI and set-up's users follow (.ci/run runs the second exactly).
  t.match(text, /^bash scripts\/setup\.sh {6}#/m, 'the set-up command');
  t.match(text, /^bash scripts\/test\.sh {7}#/m, 'the test command');
});

t.test('every docs page opens with a sentence saying what it covers', async (t) => {
  for (const page of PAGES.filter((p) => p.startsWith('docs/'))) {
    const lines = readFileSync(join(ROOT, page), 'utf8').split('\n');
    t.match(lines[0], /^# \S/, `${page}: a title first`);
    const first = lines.slice(1).find((l) => l.trim() !== '') ?? '';
    t.match(first, /^[A-Za-z`*[]/, `${page}: prose after the title, not a heading, list, table or code`);
  }
});

t.test('every relative link of README.md, QUICKSTART.md and docs/*.md reaches a file, and a heading for #anchors', async (t) => {
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (file: string) => {
    let set = anchorCache.get(file);
    if (!set) anchorCache.set(file, (set = anchorsOf(file)));
    return set;
  };
  let checked = 0;
  for (const page of PAGES) {
    const file = join(ROOT, page);
    for (const { line, target } of relativeLinks(readFileSync(file, 'utf8'))) {
      checked++;
      const hash = target.indexOf('#');
      const path = decodeURIComponent(hash === -1 ? target : target.slice(0, hash));
      const anchor = hash === -1 ? undefined : decodeURIComponent(target.slice(hash + 1));
      const dest = path === '' ? file : resolve(dirname(file), path);
      const where = `${page}:${line}: ${target}`;
      if (!dest.startsWith(ROOT) || !existsSync(dest)) {
        t.fail(`${where}: no such file (${relative(ROOT, dest)})`);
        continue;
      }
      if (anchor === undefined) continue;
      if (!dest.endsWith('.md') || statSync(dest).isDirectory()) {
        t.fail(`${where}: an anchor into a file that is not Markdown`);
        continue;
      }
      const known = anchors(dest);
      t.ok(known.has(anchor), `${where}: the heading #${anchor}`, known.has(anchor) ? {} : { headings: [...known] });
    }
  }
  t.ok(checked > 100, `${checked} links checked`);
});

t.test('slugs follow GitHub', async (t) => {
  t.equal(slug('Configuration loading: rules and decisions'), 'configuration-loading-rules-and-decisions');
  t.equal(slug('Context values for `context_aware` rules'), 'context-values-for-context_aware-rules');
  t.equal(slug('The obstacle guard (`safety.obstacle`)'), 'the-obstacle-guard-safetyobstacle');
  t.equal(slug("The runtime's environment defaults"), 'the-runtimes-environment-defaults');
  t.equal(slug('A small model on the robot (Raspberry Pi 5 or Jetson), end to end'), 'a-small-model-on-the-robot-raspberry-pi-5-or-jetson-end-to-end');
  t.equal(slug('`cortexd cloud`: the local hosted-API service (`src/service/`)'), 'cortexd-cloud-the-local-hosted-api-service-srcservice');
});
