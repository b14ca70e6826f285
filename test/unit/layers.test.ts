// Proves the dependency arrows point one way (cli -> actors/ -> devices/ -> src/ core) by parsing the imports of every source file.
import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = resolve(import.meta.dirname, '..', '..');

interface Import {
  /** What the file wrote. */
  specifier: string;
  /** The repository path it resolves to (relative imports), or the bare package name. */
  target: string;
  /** `import('…')` in code: loaded when that line runs, not when the file loads. */
  dynamic: boolean;
  /** `import type` / `export type` / `import('…').T` in a type: erased, loads nothing. */
  typeOnly: boolean;
  line: number;
}

/** Every import of a TypeScript source: static, re-export, dynamic `import()`, and type-level `import('…')`. */
function importsOf(file: string, text: string): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const found: Import[] = [];
  const add = (spec: ts.Expression | undefined, node: ts.Node, dynamic: boolean, typeOnly: boolean) => {
    if (!spec || !ts.isStringLiteralLike(spec)) return;
    const specifier = spec.text;
    const target = specifier.startsWith('.') ? relative(ROOT, resolve(dirname(file), specifier)) : specifier;
    found.push({ specifier, target, dynamic, typeOnly, line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1 });
  };
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const typeOnly =
        !!clause &&
        (clause.isTypeOnly ||
          (!clause.name &&
            !!clause.namedBindings &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      add(node.moduleSpecifier, node, false, typeOnly);
    } else if (ts.isExportDeclaration(node)) {
      add(node.moduleSpecifier, node, false, node.isTypeOnly);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      add(node.arguments[0], node, true, false);
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      add(node.argument.literal as ts.Expression, node, false, true);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sources(path));
    else if (/\.ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(path);
  }
  return out.sort();
}

const inLayer = (target: string, layer: string) => target === layer || target.startsWith(`${layer}/`);
const where = (file: string, i: Import) => `${file}:${i.line} imports ${i.specifier}`;

t.test('the import parser sees static, re-exported, dynamic and type-only imports', async (t) => {
  const text = [
    "import { a } from '../actors/a.js';",
    "import type { B } from '../actors/b.js';",
    "export { c } from '../devices/c.js';",
    "const d = await import('../actors/d.js');",
    "type E = import('../actors/e.js').E;",
    "import { z } from 'zod';",
  ].join('\n');
  const found = importsOf(join(ROOT, 'src', 'x.ts'), text);
  t.same(
    found.map((i) => [i.target, i.dynamic, i.typeOnly]),
    [
      ['actors/a.js', false, false],
      ['actors/b.js', false, true],
      ['devices/c.js', false, false],
      ['actors/d.js', true, false],
      ['actors/e.js', false, true],
      ['zod', false, false],
    ],
  );
});

t.test('src/ (the core) imports neither actors/ nor devices/; cli/ (the top layer) loads them only lazily', async (t) => {
  const files = [...sources('src'), ...sources('cli')];
  t.ok(files.length > 100, `${files.length} files under src/ and cli/`);
  const wrong: string[] = [];
  for (const file of files) {
    const cli = file.startsWith('cli/');
    for (const i of importsOf(join(ROOT, file), readFileSync(join(ROOT, file), 'utf8'))) {
      if (inLayer(i.target, 'devices') && !(cli && (i.dynamic || i.typeOnly))) {
        wrong.push(`${where(file, i)} (${cli ? 'cli/ imports devices/ only with await import() inside a command' : 'src/ never imports devices/'})`);
      }
      if (inLayer(i.target, 'actors') && !(cli && (i.dynamic || i.typeOnly))) {
        wrong.push(`${where(file, i)} (${cli ? 'cli/ imports actors/ only with await import() inside a command' : 'src/ never imports actors/'})`);
      }
    }
  }
  t.same(wrong, [], 'no arrow points up');
});

t.test('devices/ imports no actors/', async (t) => {
  const wrong: string[] = [];
  for (const file of sources('devices')) {
    for (const i of importsOf(join(ROOT, file), readFileSync(join(ROOT, file), 'utf8'))) if (inLayer(i.target, 'actors')) wrong.push(where(file, i));
  }
  t.same(wrong, []);
});

t.test('plugin descriptors and schemas load zod and each other only (no plugin code, no devices, no servers)', async (t) => {
  // Type-only imports are erased; errors.ts is the typed error of a failed lookup, catalog.ts the provider table (data).
  const allowed = (target: string) => target === 'zod' || inLayer(target, 'src/plugins') || target === 'src/errors.js' || target === 'src/cloud/catalog.js';
  const wrong: string[] = [];
  const files = sources('src/plugins');
  t.ok(
    files.some((f) => f.startsWith('src/plugins/schemas/')),
    'schema modules exist',
  );
  for (const file of files) {
    for (const i of importsOf(join(ROOT, file), readFileSync(join(ROOT, file), 'utf8'))) if (!i.typeOnly && !allowed(i.target)) wrong.push(where(file, i));
  }
  t.same(wrong, []);
});
