// Loads the one-file build of `cortexd check` or `run` (scripts/bundle-cli.mjs) through the V8 code cache kept beside it
// Undefined when the build is missing or stale.
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Script } from 'node:vm';

/*
 * Node 20 has no compile cache for modules (module.enableCompileCache came with Node 22), so
 * `check` paid for ~180 module loads before it read a file, and `run` for ~1000 before its first
 * tick. Each bundle is one script: compiled from its code cache, it starts in a fraction of that.
 * It is used only if every file it was made from is still there, no newer than the bundle and of
 * the same size: a `tsc` run without `npm run build`, or an updated package, falls back to the ES
 * modules, as does CORTEX_CLI_BUNDLE=0. The code cache is written beside the bundle when it is missing or V8
 * rejects it (another Node version); an install where dist/ is read-only keeps the one the build
 * made. Native addons, pino (its transports are worker files) and the files workers and forked
 * children start from stay real files; bundled code sees its original module's import.meta.
 */

/** What the bundle gives: the files it holds ([size, mtime ms] by path from the project root) and its module loader. */
interface Bundle {
  files: Record<string, [number, number]>;
  load(id: string): unknown;
}

type Factory = (root: string, dynamicImport: (spec: string) => Promise<unknown>, require: NodeRequire) => Bundle;

/** The commands that have a bundle. */
export type BundledCommand = 'check' | 'run';

/** A command's bundle beside this module (dist/cli/check.bundle.cjs, run.bundle.cjs). */
export function bundleFile(command: BundledCommand = 'check'): string {
  return join(dirname(fileURLToPath(import.meta.url)), `${command}.bundle.cjs`);
}

/** True when the bundle's sources are all present, the same size and no newer than it. */
function current(bundle: Bundle, root: string, made: number): boolean {
  for (const [id, [size]] of Object.entries(bundle.files)) {
    const s = statSync(join(root, id), { throwIfNoEntry: false });
    if (!s || s.size !== size || s.mtimeMs > made) return false;
  }
  return true;
}

/** The bundle's name for its content: its first line, `// <16 hex digits>`. */
const ID_LENGTH = 16;
const idOf = (source: string): string => source.slice(3, 3 + ID_LENGTH);

/** The cache V8 made for this very bundle: the file starts with the bundle's id (V8 itself compares lengths only). */
export function readCache(file: string, id: string): Buffer | undefined {
  try {
    const data = readFileSync(file);
    return data.subarray(0, ID_LENGTH).toString('latin1') === id ? data.subarray(ID_LENGTH) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes the code cache after the command ran (so it holds the functions it compiled), atomically; a read-only dist/ keeps what it has. */
function keepCache(script: Script, file: string, id: string): void {
  process.once('exit', () => {
    try {
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, Buffer.concat([Buffer.from(id, 'latin1'), script.createCachedData()]));
      renameSync(tmp, file);
    } catch {
      // Read-only install or a full disk: the next start compiles again, nothing else changes.
    }
  });
}

/** The program module (`run(argv)`) from `command`'s bundle, or undefined to use the ES modules. */
export function loadCliBundle(command: BundledCommand): { run(argv: string[]): void } | undefined {
  return loadCheckBundle(bundleFile(command));
}

/** The program module (`run(argv)`) from the bundle `file` (check's by default), or undefined to use the ES modules. */
export function loadCheckBundle(file = bundleFile()): { run(argv: string[]): void } | undefined {
  if (process.env.CORTEX_CLI_BUNDLE === '0') return undefined;
  let source: string;
  let made: number;
  try {
    made = statSync(file).mtimeMs;
    // The build writes bundles in ASCII (scripts/bundle-cli.mjs), so latin1 reads the same text without
    // UTF-8 decoding: 8-12 ms less for run's 4 MB before the first tick.
    source = readFileSync(file, 'latin1');
  } catch {
    return undefined;
  }
  const cacheFile = `${file}.cache`;
  const id = idOf(source);
  const cachedData = readCache(cacheFile, id);
  try {
    const script = new Script(source, { filename: file, cachedData });
    const root = join(dirname(file), '..', '..');
    const bundle = (script.runInThisContext() as Factory)(root, (spec) => import(spec), createRequire(file));
    if (!current(bundle, root, made)) return undefined;
    const program = bundle.load('dist/cli/program.js') as { run(argv: string[]): void };
    if (cachedData === undefined || script.cachedDataRejected) keepCache(script, cacheFile, id);
    return program;
  } catch {
    // A bundle that does not even load (a damaged file): the ES modules do the same work, only slower.
    return undefined;
  }
}
