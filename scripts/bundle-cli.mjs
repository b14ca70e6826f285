// Bundles the modules `cortexd check` runs (built dist/ and its packages) into one CommonJS file with esbuild, so it starts without ~180 module loads.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import * as esbuild from 'esbuild';

/*
 * Why: on Node 20 each ES module costs a resolve, a file read and a compile (no compile cache
 * before Node 22), and `check` loads about 180 of them (zod alone is 95). One file, compiled once
 * and then from the V8 code cache the loader (cli/bundle.ts) keeps next to it, takes that to
 * a fraction (issue 29: check within 150 ms of a bare node start). esbuild does the bundling; this
 * script only says what goes in and how the result meets the loader:
 *
 * - The entry is the command program (every command declares its options). Dynamic imports made
 *   by check's own graph are bundled; those of the other commands (run's actors, the service...)
 *   stay imports of the original files, through the loader's `import()` (a script compiled by
 *   vm has none of its own on Node 20).
 * - `import.meta` is, in each module that uses it, that module's original file and URL (code that
 *   finds files relative to itself, such as paths.ts, sees the layout of dist/ as before).
 * - The bundle is wrapped in a factory the loader calls with the project root: it lists every file
 *   it holds with its size and mtime (packages by their package.json), and evaluates the modules
 *   only when asked for the program, after the loader found them current. A stale bundle never runs.
 *
 * Usage: node scripts/bundle-cli.mjs (after tsc; `npm run build` does both).
 */
const root = resolve(import.meta.dirname, '..');
const cliDir = join(root, 'dist', 'cli');
const PROGRAM = 'dist/cli/program.js';
/** The prefix of an import left to the original files; the wrapper's `__cortex_import` answers it. */
const OUTSIDE = 'cortexd-outside:';
/**
 * Packages that stay real files for `run`: native addons, WebAssembly, worker threads or files they
 * find beside themselves (pino's transports, elk's worker), and what only a rare path loads. A
 * package one of them shares state with stays outside too (a bundled copy would be a second one).
 */
const RUN_EXTERNAL = [
  'better-sqlite3',
  // OpenCV with its build-environment helper, whose log switch src/vision/opencv.ts turns off: one copy of each.
  '@u4/*',
  'unix-dgram',
  'serialport',
  '@serialport/*',
  '@echogarden/*',
  // pino itself is bundled (18 ms of loading ~30 files): only its transports run files (thread-stream's
  // worker), and cortexd uses none; pino-pretty is loaded from its file, on a terminal only.
  'pino-pretty',
  'thread-stream',
  'elkjs',
  'elkjs/*',
  'playwright-core',
  'node-record-lpcm16',
  '*.node',
  '*.wasm',
];
/**
 * The two bundles: `check` holds the program and check's graph (the other commands' dynamic imports
 * stay imports of the original files); `run` holds the program with every literal dynamic import.
 */
const BUNDLES = [
  { name: 'check', follow: 'dist/cli/check.js', external: [] },
  { name: 'run', follow: PROGRAM, external: RUN_EXTERNAL },
];

const id = (file) => relative(root, file).split(sep).join('/');
const common = { absWorkingDir: root, bundle: true, platform: 'node', target: 'node20', write: false, metafile: true, logLevel: 'error' };

/** esbuild's output for one bundle: the program, with `follow`'s graph and its dynamic imports inside. */
async function pack({ follow, external }) {
  const scan = await esbuild.build({ ...common, entryPoints: [follow], format: 'esm', splitting: true, outdir: 'dist/.bundle-scan', external });
  const followed = new Set(Object.keys(scan.metafile.inputs));
  /** @type {esbuild.Plugin} */
  const plugin = {
    name: 'cortexd-cli-bundle',
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.kind !== 'dynamic-import' || args.pluginData === OUTSIDE || followed.has(id(args.importer))) return undefined;
        if (!args.path.startsWith('.')) return { path: OUTSIDE + args.path, external: true };
        const found = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: OUTSIDE });
        if (found.errors.length > 0) return { errors: found.errors };
        // A module the followed graph holds answers from the bundle; another is the original file, named from the bundle's directory.
        if (followed.has(id(found.path))) return undefined;
        return { path: `${OUTSIDE}./${relative(cliDir, found.path).split(sep).join('/')}`, external: true };
      });
      build.onLoad({ filter: /\.js$/ }, async (args) => {
        if (!id(args.path).startsWith('dist/')) return undefined;
        const source = readFileSync(args.path, 'utf8');
        if (!source.includes('import.meta')) return undefined;
        // Each module's own import.meta: a local the wrapper's __cortex_meta fills with the original file's URL
        // (workers and forked children are started from the original files beside it).
        const { code } = await esbuild.transform(source, { loader: 'js', define: { 'import.meta': '__cortex_import_meta' } });
        return {
          contents: `const __cortex_import_meta = __cortex_meta(${JSON.stringify(id(args.path))});\n${code}`,
          loader: 'js',
          resolveDir: dirname(args.path),
        };
      });
    },
  };
  // Whitespace minified: no comment can hold a stray `import(` (and the file is half the size).
  const built = await esbuild.build({
    ...common,
    entryPoints: [PROGRAM],
    format: 'cjs',
    outdir: 'dist/.bundle-scan',
    external,
    plugins: [plugin],
    legalComments: 'none',
    minifyWhitespace: true,
  });
  // esbuild keeps an import() it does not bundle (a package left outside, a computed specifier such as a
  // hook's file) as it is; a script compiled by vm has no import() of its own on Node 20, so it goes
  // through the loader's.
  const code = built.outputFiles[0].text.replaceAll(`import("${OUTSIDE}`, '__cortex_import("').replace(/(?<![\w$.])import\(/g, '__cortex_import(');
  return { code, inputs: Object.keys(built.metafile.inputs).map((input) => join(root, input)) };
}

/** The package.json that names the package `file` belongs to: a package stands for its files in the bundle's list. */
function packageJson(file) {
  for (let dir = dirname(file); dirname(dir) !== dir; dir = dirname(dir)) {
    try {
      if (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name) return join(dir, 'package.json');
    } catch {}
  }
  return file;
}
/**
 * The bundle in ASCII: the loader reads it as latin1, a copy where UTF-8 decoding took 8-12 ms for
 * run's 4 MB. esbuild escapes strings but leaves a few characters in regular expressions (the
 * sentence splitter's terminators); each is written as its \uXXXX escape, which means the same in a
 * string, a template, a regular expression (with or without the u flag: a surrogate pair of escapes
 * is one code point there) and an identifier. Nothing else may remain outside ASCII.
 */
function ascii(code) {
  return code.replace(/[^\x00-\x7f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** Writes dist/cli/<name>.bundle.cjs: esbuild's code in the factory cli/bundle.ts calls. */
function write(name, code, inputs) {
  const out = join(cliDir, `${name}.bundle.cjs`);
  // What the loader compares before it trusts the bundle: each dist/ file, and each package by its package.json.
  const sources = new Set(inputs.map((file) => (file.includes(`${sep}node_modules${sep}`) ? packageJson(file) : file)));
  const files = Object.fromEntries(
    [...sources].map((file) => {
      const s = statSync(file);
      return [id(file), [s.size, Math.trunc(s.mtimeMs)]];
    }),
  );

  const body = `// Generated by scripts/bundle-cli.mjs (esbuild) from dist/ and node_modules: do not edit. Loaded by cli/bundle.ts.
(function (root, dynamicImport, require) {
const path = require('node:path');
const { pathToFileURL } = require('node:url');
const cliDir = path.join(root, 'dist', 'cli');
function __cortex_meta(id) {
  const filename = path.join(root, id);
  const url = pathToFileURL(filename).href;
  return { url, filename, dirname: path.dirname(filename), resolve: (spec) => new URL(spec, url).href };
}
function __cortex_import(spec) {
  return dynamicImport(spec.startsWith('.') ? pathToFileURL(path.resolve(cliDir, spec)).href : spec);
}
let program;
function load(id) {
  if (id !== ${JSON.stringify(PROGRAM)}) throw new Error('the ${name} bundle holds ${PROGRAM} only, not ' + id);
  if (program) return program.exports;
  program = { exports: {} };
  (function (module, exports) {
${code}
  })(program, program.exports);
  return program.exports;
}
return { files: ${JSON.stringify(files)}, load };
})`;

  // The first line names the content: V8 checks a code cache against the source's length only, so the
  // loader keeps the cache under this name and never runs one made for another bundle of the same length.
  const text = ascii(body);
  const bundle = `// ${createHash('sha256').update(text).digest('hex').slice(0, 16)}\n${text}`;
  writeFileSync(out, bundle);
  rmSync(`${out}.cache`, { force: true });
  console.log(`bundle-cli: ${id(out)}: ${inputs.length} modules, ${(bundle.length / 1024).toFixed(0)} KiB`);
  return out;
}

const written = [];
for (const { name, ...what } of BUNDLES) {
  const { code, inputs } = await pack(what);
  written.push(write(name, code, inputs));
}
rmSync(join(root, 'dist', '.bundle-scan'), { recursive: true, force: true });

/** Removes the bundles (each command then runs from the ES modules) and fails the build. */
function fail(message) {
  for (const out of written) for (const file of [out, `${out}.cache`]) rmSync(file, { force: true });
  console.error(`bundle-cli: ${message}; bundles removed.`);
  process.exit(1);
}
const cortexd = (args, bundled, env = {}) =>
  spawnSync(process.execPath, [join(cliDir, 'main.js'), ...args], {
    env: { ...process.env, CORTEX_CONFIG_DIR: join(root, 'config'), CORTEX_CLI_BUNDLE: bundled ? '1' : '0', NODE_OPTIONS: '', ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
const shown = (r) => `exit ${r.status}\n${r.stdout}${r.stderr}${r.error ?? ''}`;

// One check of the shipped configurations writes check's code cache, with the functions it compiled, so
// an install whose dist/ is read-only starts from it too. The same check from the ES modules must print the same.
const [fromBundle, fromModules] = [cortexd(['check', '--all'], true), cortexd(['check', '--all'], false)];
if (shown(fromBundle) !== shown(fromModules))
  fail(`check --all differs from the bundle\n--- ES modules:\n${shown(fromModules)}\n--- bundle:\n${shown(fromBundle)}`);

// A short run of an agent with no inputs and the embedded service writes run's code cache; it must tick and stop cleanly.
const scratch = mkdtempSync(join(tmpdir(), 'cortexd-bundle-run-'));
try {
  const config = join(scratch, 'bundle_smoke.json5');
  writeFileSync(
    config,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'bundle_smoke',
      default_mode: 'm',
      api_key: '',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      system_governance: 'obey',
      service: { base_url: 'embedded' },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini' } },
      modes: {
        m: {
          display_name: 'M',
          description: 'd',
          system_prompt_base: 'rest',
          hertz: 10,
          agent_inputs: [],
          agent_actions: [{ name: 'face', llm_label: 'emotion', connector: 'console' }],
        },
      },
    }),
  );
  const run = cortexd(['run', '--config', config, '--events', '--for', '500ms'], true, {
    CORTEX_STATE_DIR: scratch,
    NOTIFY_SOCKET: '',
    CORTEX_LOG_LEVEL: 'warn',
  });
  if (run.status !== 0 || !run.stdout.includes('"type":"tick"')) fail(`a short run from the bundle did not tick and stop\n${shown(run)}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
