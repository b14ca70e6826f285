// The check bundle's loader: used only while every source is present, the same size and no newer; a cache made for another bundle is never used.
import t, { type Test } from 'tap';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadCheckBundle, readCache } from '../../cli/bundle.js';

// A loaded bundle keeps V8's code cache when the process exits (one exit listener each, as a CLI
// process loads one). These bundles are temporary: their listeners go when this file's tests end.
const exitListeners = new Set(process.listeners('exit'));
t.teardown(() => {
  for (const listener of process.listeners('exit')) if (!exitListeners.has(listener)) process.removeListener('exit', listener);
});

/** A project with dist/src/a.js and a bundle that lists it as it is now and answers `run` with the id it was asked to load. */
function project(t: Test) {
  const root = mkdtempSync(join(tmpdir(), 'cortexd-bundle-'));
  t.teardown(() => rmSync(root, { recursive: true, force: true }));
  const cli = join(root, 'dist', 'cli');
  mkdirSync(cli, { recursive: true });
  mkdirSync(join(root, 'dist', 'src'), { recursive: true });
  const source = join(root, 'dist', 'src', 'a.js');
  writeFileSync(source, 'export const a = 1;\n');
  const past = new Date(Date.now() - 60_000);
  utimesSync(source, past, past);
  const file = join(cli, 'check.bundle.cjs');
  const body = `(function (root, dynamicImport, require) {
  return { files: { 'dist/src/a.js': [${'export const a = 1;\n'.length}, ${past.getTime()}] }, load: (id) => ({ run: () => [id, root, typeof require] }) };
})`;
  writeFileSync(file, `// 0123456789abcdef\n${body}`);
  return { root, file, source };
}

t.test('a current bundle gives the program module it holds', async (t) => {
  const { file } = project(t);
  const program = loadCheckBundle(file) as unknown as { run(): unknown[] } | undefined;
  t.ok(program, 'loaded');
  const [id, , req] = program!.run();
  t.equal(id, 'dist/cli/program.js');
  t.equal(req, 'function', 'the bundle gets a require for builtins and what it does not hold');
});

t.test('a source newer than the bundle, of another size or gone: the ES modules are used', async (t) => {
  const newer = project(t);
  const future = new Date(Date.now() + 60_000);
  utimesSync(newer.source, future, future);
  t.equal(loadCheckBundle(newer.file), undefined, 'rebuilt by tsc after the bundle');

  const resized = project(t);
  writeFileSync(resized.source, 'export const a = 22;\n');
  const past = new Date(Date.now() - 120_000);
  utimesSync(resized.source, past, past);
  t.equal(loadCheckBundle(resized.file), undefined, 'another size, even with an older mtime');

  const gone = project(t);
  rmSync(gone.source);
  t.equal(loadCheckBundle(gone.file), undefined, 'a source removed');

  t.equal(loadCheckBundle(join(gone.root, 'no-such.cjs')), undefined, 'no bundle at all');
});

t.test('a damaged bundle (it does not compile, or its program throws while loading): the ES modules are used', async (t) => {
  const broken = project(t);
  writeFileSync(broken.file, '// 0123456789abcdef\n(function (root {');
  t.equal(loadCheckBundle(broken.file), undefined, 'a syntax error');
  const throwing = project(t);
  writeFileSync(throwing.file, `// 0123456789abcdef\n(function () { return { files: {}, load: () => { throw new Error('module failed'); } }; })`);
  t.equal(loadCheckBundle(throwing.file), undefined, 'an error while loading the program');
});

t.test('CORTEX_CLI_BUNDLE=0 turns the bundle off', async (t) => {
  const { file } = project(t);
  const before = process.env.CORTEX_CLI_BUNDLE;
  process.env.CORTEX_CLI_BUNDLE = '0';
  t.teardown(() => (before === undefined ? delete process.env.CORTEX_CLI_BUNDLE : (process.env.CORTEX_CLI_BUNDLE = before)));
  t.equal(loadCheckBundle(file), undefined);
});

t.test('a code cache is used only for the bundle whose id it starts with (V8 compares lengths only)', async (t) => {
  const { file } = project(t);
  const cache = `${file}.cache`;
  writeFileSync(cache, Buffer.concat([Buffer.from('0123456789abcdef'), Buffer.from([1, 2, 3])]));
  t.same([...(readCache(cache, '0123456789abcdef') ?? [])], [1, 2, 3], 'its own');
  t.equal(readCache(cache, 'fedcba9876543210'), undefined, "another bundle's");
  t.equal(readCache(`${file}.none`, '0123456789abcdef'), undefined, 'none');
});
