// The state of the house: longest functions, files without a one-line first comment, import circles and upward imports between layers; `--check` exits 1 past the limits.
// Usage: node scripts/house.js [--check] [--top N] [--json]
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const CHECK = args.includes('--check');
const JSON_OUT = args.includes('--json');
const TOP = args.includes('--top') ? Number(args[args.indexOf('--top') + 1]) : 20;
/** A function longer than this many lines needs `// long: <reason>` on the line above it (or on its first line). */
const MAX_FUNCTION_LINES = 80;
/** A file's first line (after a shebang) says what it is, in one `//` comment of at most this many characters. */
const MAX_FIRST_LINE = 160;
/** The folders whose functions are measured. */
const MEASURED = ['cli', 'actors', 'src'];

/**
 * The layers, top first (DESIGN.md: `cli` → `actors/` → `devices/` → `src/` core), and inside the
 * core the order its folders build on each other (the applications on the core; modes and the cortex on
 * the configuration; the configuration on the plugin descriptors; all of them on the hosted API's
 * client): a file may import its own layer or one below it.
 * A prefix names a layer; the longest prefix that matches a file wins. `src` holds what no finer
 * core layer names (errors.ts, log.ts, backoff.ts, ...): the floor.
 */
const LAYERS = [
  ['cli'],
  ['actors'],
  ['devices'],
  ['src/fleet', 'src/websim', 'src/doctor', 'src/record', 'src/compat', 'src/safety', 'src/mqtt', 'src/systemd', 'src/memory', 'src/metrics'],
  ['src/modes', 'src/cortex'],
  ['src/config'],
  ['src/plugins'],
  ['src/service'],
  ['src/cloud', 'src/vision', 'src/pipelines'],
  ['src', 'src/types'],
];
const rank = new Map();
LAYERS.forEach((names, i) => {
  for (const n of names) rank.set(n, LAYERS.length - 1 - i);
});
/** The layer (its prefix) of a repository path, or undefined outside the layered folders. */
function layerOf(path) {
  let best;
  for (const name of rank.keys()) if ((path === name || path.startsWith(`${name}/`)) && (!best || name.length > best.length)) best = name;
  return best;
}

function sources(dir) {
  const out = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(path));
    else if (/\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out.sort();
}

const parse = (file) => ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);

/** A readable name for a function-like node: its own, or the variable, property or call it is given to. */
function nameOf(node, source) {
  if (node.name && ts.isIdentifier(node.name)) return node.name.text;
  if (node.name) return node.name.getText(source);
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const p = node.parent;
  if (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) return p.name.getText(source);
  if (ts.isCallExpression(p)) return `(callback of ${p.expression.getText(source).slice(0, 40)})`;
  return '(anonymous)';
}

/** Every function-like node of a file with its line count and whether a `// long:` reason is written next to it. */
function functionsOf(file) {
  const source = parse(file);
  const lines = source.text.split('\n');
  const found = [];
  const visit = (node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      // The comment may sit above the statement that holds the function (`const x = () => {`, `export function`).
      let holder = node;
      while (
        holder.parent &&
        !ts.isSourceFile(holder.parent) &&
        !ts.isBlock(holder.parent) &&
        !ts.isClassLike(holder.parent) &&
        !ts.isObjectLiteralExpression(holder.parent)
      )
        holder = holder.parent;
      const from = source.getLineAndCharacterOfPosition(holder.getStart(source)).line;
      const around = lines.slice(Math.max(0, from - 6), start + 2).join('\n');
      found.push({ file, name: nameOf(node, source), line: start + 1, lines: end - start + 1, reason: /\/\/\s*long:\s*\S/.test(around) });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every import of a file (static, re-export, dynamic, type-level) resolved to a repository path; bare packages left out. */
function importsOf(file) {
  const source = parse(file);
  const found = [];
  const add = (spec, node, dynamic, typeOnly) => {
    if (!spec || !ts.isStringLiteralLike(spec) || !spec.text.startsWith('.')) return;
    const target = relative(ROOT, resolve(dirname(join(ROOT, file)), spec.text)).replace(/\.js$/, '.ts');
    found.push({ target, dynamic, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1 });
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const c = node.importClause;
      const typeOnly =
        !!c &&
        (c.isTypeOnly ||
          (!c.name &&
            !!c.namedBindings &&
            ts.isNamedImports(c.namedBindings) &&
            c.namedBindings.elements.length > 0 &&
            c.namedBindings.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier, node, false, typeOnly);
    } else if (ts.isExportDeclaration(node)) add(node.moduleSpecifier, node, false, node.isTypeOnly);
    else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) add(node.arguments[0], node, true, false);
    else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) add(node.argument.literal, node, false, true);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Strongly connected components of more than one file (Tarjan's algorithm): the import circles. */
function circles(graph) {
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const out = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const scc = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!idx.has(v)) strong(v);
  return out;
}

const files = [...sources('cli'), ...sources('src'), ...sources('actors'), ...sources('devices')];

// Functions.
const functions = files.filter((f) => MEASURED.some((m) => f.startsWith(`${m}/`))).flatMap(functionsOf);
functions.sort((a, b) => b.lines - a.lines);
const overLimit = functions.filter((f) => f.lines > MAX_FUNCTION_LINES);
const unexplained = overLimit.filter((f) => !f.reason);

// First lines: what each file is, in one short comment (the rationale goes to docs/, the history to git).
const firstLines = files
  .map((file) => {
    const lines = readFileSync(join(ROOT, file), 'utf8').split('\n');
    const first = lines[0]?.startsWith('#!') ? lines[1] : lines[0];
    return { file, first: first ?? '' };
  })
  .filter(({ first }) => !first.startsWith('// ') || first.length > MAX_FIRST_LINE)
  .map(({ file, first }) => `${file}: ${first.startsWith('// ') ? `${first.length} characters` : 'no first-line comment'}`);

// Imports: circles (every import, type-only included: a type-only circle is an interface in the wrong file) and upward arrows.
const graph = new Map();
const upward = [];
for (const file of files) {
  const imports = importsOf(file);
  graph.set(
    file,
    imports.map((i) => i.target),
  );
  const from = layerOf(file);
  for (const i of imports) {
    const to = layerOf(i.target);
    if (!from || !to || from === to) continue;
    // cli loads actors/ lazily by design; the rule of layers.test.ts.
    if (rank.get(to) > rank.get(from)) upward.push({ file, line: i.line, from, to, target: i.target, typeOnly: i.typeOnly, dynamic: i.dynamic });
  }
}
const loops = circles(graph);
/** Upward imports between distinct layers, as layer pairs with how many imports each. */
const upwardPairs = {};
for (const u of upward) {
  const k = `${u.from} -> ${u.to}`;
  upwardPairs[k] = (upwardPairs[k] ?? 0) + 1;
}

const report = {
  limits: { max_function_lines: MAX_FUNCTION_LINES, max_first_line: MAX_FIRST_LINE, circles: 0, upward_imports: 0 },
  functions_measured: functions.length,
  functions_over_limit: overLimit.length,
  functions_over_limit_without_reason: unexplained.length,
  longest: functions.slice(0, TOP).map((f) => ({ where: `${f.file}:${f.line}`, name: f.name, lines: f.lines, reason: f.reason })),
  first_lines: firstLines,
  circles: loops,
  upward_layer_pairs: upwardPairs,
  upward_imports: upward.map((u) => `${u.file}:${u.line} -> ${u.target}${u.typeOnly ? ' (type)' : ''}${u.dynamic ? ' (dynamic)' : ''}`),
};

if (JSON_OUT) console.log(JSON.stringify(report, null, 2));
else {
  console.log(`Longest functions in ${MEASURED.join('/, ')}/ (limit ${MAX_FUNCTION_LINES} lines without a "// long: <reason>" next to it):`);
  for (const f of report.longest) console.log(`  ${String(f.lines).padStart(4)}  ${f.name}  ${f.where}${f.reason ? '  (long: reason given)' : ''}`);
  console.log(`  ${overLimit.length} of ${functions.length} functions over ${MAX_FUNCTION_LINES} lines, ${unexplained.length} without a reason`);
  console.log(`\nFiles whose first line is not one \`//\` comment of at most ${MAX_FIRST_LINE} characters: ${firstLines.length}`);
  for (const f of firstLines) console.log(`  ${f}`);
  console.log(`\nImport circles (type-only imports included): ${loops.length}`);
  for (const c of loops) console.log(`  ${c.join(' <-> ')}`);
  console.log(`\nUpward imports between layers (${LAYERS.map((l) => l.join(' ')).join(' > ')}): ${upward.length}`);
  for (const [pair, n] of Object.entries(upwardPairs)) console.log(`  ${pair}: ${n}`);
  for (const u of report.upward_imports) console.log(`    ${u}`);
}

const failures = [];
if (unexplained.length) failures.push(`${unexplained.length} functions over ${MAX_FUNCTION_LINES} lines without a "// long:" reason`);
if (firstLines.length) failures.push(`${firstLines.length} files without a short first-line comment`);
if (loops.length) failures.push(`${loops.length} import circles`);
if (upward.length) failures.push(`${upward.length} upward imports`);
const summary = `house: ${unexplained.length} long functions without a reason, ${firstLines.length} first lines to fix, ${loops.length} import circles, ${upward.length} upward imports`;
console.log(failures.length ? `${summary}; past the limits: ${failures.join('; ')}` : `${summary}; within the limits`);
if (CHECK && failures.length) process.exit(1);
