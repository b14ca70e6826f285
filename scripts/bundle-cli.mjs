// Packs the modules `cortexd check` runs (built dist/ and the CommonJS builds of its packages) into one CommonJS file, so it starts without ~180 module loads.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire, isBuiltin } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

/*
 * Why: on Node 20 each ES module costs a resolve, a file read and a compile (no compile cache
 * before Node 22), and `check` loads about 180 of them (zod alone is 95). One file, compiled once
 * and then from the V8 code cache the loader (src/cli/bundle.ts) keeps next to it, takes that to
 * a fraction (issue 29: check within 150 ms of a bare node start). There is no bundler in the
 * dependencies, so this is a small one that does only what this graph needs:
 *
 * - ES modules of dist/ are turned into CommonJS by TypeScript's own transform (`transpileModule`:
 *   live bindings through `module_1.name`, `export *` through getters, the same evaluation order);
 *   `import.meta` and `import()` are renamed first, to values the loader gives each module: the
 *   module's original file and URL, and a dynamic import that answers from the bundle or else
 *   loads the original file (a user's hook module, say).
 * - Packages are taken as their `require` build (zod's index.cjs, commander, json5, dotenv): as
 *   they are, each in its own function, their `require("./x")` mapped to the bundled copy.
 * - Anything it cannot resolve, builtins and non-JavaScript files stay real requires/imports.
 *
 * The bundle lists every file it holds with its size and mtime; the loader falls back to the
 * ES modules when one differs (a `tsc` without this step, an updated package), so a stale bundle
 * never runs. Usage: node scripts/bundle-cli.mjs (after tsc; `npm run build` does both).
 */
const root = resolve(import.meta.dirname, '..');
const out = join(root, 'dist', 'src', 'cli', 'check.bundle.cjs');
/**
 * What `check` needs: check.ts with everything it imports, on demand too (followed), and the program
 * (every command declares its options; what the other commands import when they run is not bundled).
 */
const followed = 'dist/src/cli/check.js';
const program = 'dist/src/cli/program.js';

/** @type {Map<string, {file: string, esm: boolean, code: string, deps: Record<string, string>, dynamic: string[]}>} */
const modules = new Map();

function packageType(file) {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    try {
      return JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).type ?? 'commonjs';
    } catch {
      if (dirname(dir) === dir) return 'commonjs';
    }
  }
}

function isEsm(file) {
  if (file.endsWith('.mjs')) return true;
  if (file.endsWith('.cjs')) return false;
  return packageType(file) === 'module';
}

/** The file `spec` names from `file`, as Node's require would find it; undefined for builtins and what stays outside. */
function resolveFrom(file, spec) {
  if (isBuiltin(spec)) return undefined;
  try {
    const found = createRequire(file).resolve(spec);
    return /\.(c|m)?js$/.test(found) ? found : undefined;
  } catch {
    return undefined;
  }
}

/** An ES module's source with `import.meta` and `import(` renamed, and its static and dynamic specifiers. */
function rewriteEsm(file, source) {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.JS);
  const edits = [];
  const statics = [];
  const dynamics = [];
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier))
      statics.push(node.moduleSpecifier.text);
    if (ts.isMetaProperty(node) && node.keywordToken === ts.SyntaxKind.ImportKeyword) edits.push([node.getStart(sf), node.end, '__import_meta']);
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      edits.push([node.expression.getStart(sf), node.expression.end, '__import']);
      const arg = node.arguments[0];
      if (arg && ts.isStringLiteralLike(arg)) dynamics.push(arg.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  let text = source;
  for (const [start, end, by] of edits.sort((a, b) => b[0] - a[0])) text = text.slice(0, start) + by + text.slice(end);
  return { text, statics, dynamics };
}

function add(file, follow) {
  const id = relative(root, file).split(sep).join('/');
  if (modules.has(id)) return id;
  const source = readFileSync(file, 'utf8').replace(/^\/\/# sourceMappingURL=.*$/m, '');
  const esm = isEsm(file);
  const mod = { file, esm, follow, code: '', deps: {}, dynamic: [] };
  modules.set(id, mod);
  let specs;
  if (esm) {
    const { text, statics, dynamics } = rewriteEsm(file, source);
    const { outputText, diagnostics } = ts.transpileModule(text, {
      fileName: file,
      reportDiagnostics: true,
      compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, esModuleInterop: true, allowJs: true, sourceMap: false },
    });
    if (diagnostics?.length) throw new Error(`${id}: ${ts.flattenDiagnosticMessageText(diagnostics[0].messageText, '\n')}`);
    mod.code = outputText.replace(/^\/\/# sourceMappingURL=.*$/m, '');
    specs = statics.concat(follow ? dynamics : []);
    mod.dynamic = dynamics;
  } else {
    mod.code = source;
    specs = ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
  }
  for (const spec of new Set(specs)) {
    const target = resolveFrom(file, spec);
    if (target) mod.deps[spec] = add(target, follow);
  }
  return id;
}

add(join(root, followed), true);
add(join(root, program), false);

// A dynamic import of a module the bundle holds answers from it; the others load the original file.
// Those on check's path are printed: one of them that imports a bundled module would load a second copy of it.
const outside = [];
for (const [id, mod] of modules)
  for (const spec of mod.dynamic) {
    const target = resolveFrom(mod.file, spec);
    const targetId = target && relative(root, target).split(sep).join('/');
    if (targetId && modules.has(targetId)) mod.deps[spec] = targetId;
    else if (mod.follow) outside.push(`${id}: import('${spec}')`);
  }

const defs = [...modules].map(([id, mod]) => {
  // An ES module is strict code; a CommonJS one is strict only if it says so, as under Node's own loader.
  const header = mod.esm
    ? "function (exports, require, module, __filename, __dirname, __import_meta, __import) {'use strict';"
    : 'function (exports, require, module, __filename, __dirname) {';
  return `${JSON.stringify(id)}: [${mod.esm ? 1 : 0}, ${JSON.stringify(mod.deps)}, (${header}\n${mod.code}\n})]`;
});
/** The package.json that names the package `file` belongs to: a package stands for its files in the bundle's list. */
function packageJson(file) {
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) {
    try {
      if (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name) return join(dir, 'package.json');
    } catch {}
  }
  return file;
}
// What the loader compares before it trusts the bundle: each dist/ file, and each package by its package.json
// (an install or update rewrites it); about 90 stats instead of 180.
const sources = new Set([...modules.values()].map((mod) => (mod.file.includes(`${sep}node_modules${sep}`) ? packageJson(mod.file) : mod.file)));
const files = Object.fromEntries(
  [...sources].map((file) => {
    const s = statSync(file);
    return [relative(root, file).split(sep).join('/'), [s.size, Math.trunc(s.mtimeMs)]];
  }),
);

const body = `// Generated by scripts/bundle-cli.mjs from dist/ and node_modules: do not edit. Loaded by src/cli/bundle.ts.
(function (root, dynamicImport, require) {
const path = require('node:path');
const { createRequire } = require('node:module');
const { pathToFileURL } = require('node:url');
const defs = {
${defs.join(',\n')}
};
const loaded = new Map();
function load(id) {
  const have = loaded.get(id);
  if (have) return have.exports;
  const [esm, deps, fn] = defs[id];
  const filename = path.join(root, id);
  const dir = path.dirname(filename);
  const module = { id: filename, filename, exports: {}, loaded: false };
  loaded.set(id, module);
  let real;
  const outside = () => (real ??= createRequire(filename));
  const req = (spec) => (deps[spec] !== undefined ? load(deps[spec]) : outside()(spec));
  req.resolve = (spec, options) => outside().resolve(spec, options);
  if (esm) {
    const meta = { url: pathToFileURL(filename).href, filename, dirname: dir, resolve: (spec) => pathToFileURL(outside().resolve(spec)).href };
    const imp = (spec) =>
      deps[spec] !== undefined
        ? Promise.resolve().then(() => namespace(deps[spec]))
        : dynamicImport(spec.startsWith('.') ? pathToFileURL(path.resolve(dir, spec)).href : spec);
    fn.call(module.exports, module.exports, req, module, filename, dir, meta, imp);
  } else fn.call(module.exports, module.exports, req, module, filename, dir);
  module.loaded = true;
  return module.exports;
}
/** What import() of a bundled module gives: an ES module's exports, or a CommonJS module's exports as its default. */
function namespace(id) {
  const exports = load(id);
  return defs[id][0] || exports.__esModule ? exports : Object.assign(Object.create(null), exports, { default: exports });
}
return { files: ${JSON.stringify(files)}, load };
})`;

// The first line names the content: V8 checks a code cache against the source's length only, so the
// loader keeps the cache under this name and never runs one made for another bundle of the same length.
const bundle = `// ${createHash('sha256').update(body).digest('hex').slice(0, 16)}\n${body}`;
writeFileSync(out, bundle);
console.log(`bundle-cli: ${relative(root, out)}: ${modules.size} modules, ${(bundle.length / 1024).toFixed(0)} KiB`);

// One check of the shipped configurations writes the code cache, with the functions it compiled, so
// an install whose dist/ is read-only starts from it too. The same check from the ES modules must
// print the same: if not, the bundle is removed (check then runs from the ES modules) and the build fails.
rmSync(`${out}.cache`, { force: true });
const checkAll = (bundled) =>
  spawnSync(process.execPath, [join(root, 'dist', 'src', 'cli', 'main.js'), 'check', '--all'], {
    env: { ...process.env, CORTEX_CONFIG_DIR: join(root, 'config'), CORTEX_CLI_BUNDLE: bundled ? '1' : '0', NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
const [fromBundle, fromModules] = [checkAll(true), checkAll(false)];
const shown = (r) => `exit ${r.status}\n${r.stdout}${r.stderr}${r.error ?? ''}`;
if (shown(fromBundle) !== shown(fromModules)) {
  rmSync(out, { force: true });
  rmSync(`${out}.cache`, { force: true });
  console.error(`bundle-cli: check --all differs from the bundle; bundle removed.\n--- ES modules:\n${shown(fromModules)}\n--- bundle:\n${shown(fromBundle)}`);
  process.exit(1);
}
for (const line of outside) console.log(`bundle-cli: left to the ES module: ${line}`);
