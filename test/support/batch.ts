// The unit batches: test/unit's files run in a few tap processes (test/batches/unit-N.test.ts), each file a subtest named after it, not one process each.
import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { register } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * test/unit files that tap runs alone, each in a process of its own, and why. The files of
 * package.json's `tap.serial` stay alone too (they run after the others, with nothing beside them).
 */
export const ALONE: Record<string, string> = {
  'test/unit/vision-opencv.test.ts':
    "asserts that OpenCV's first load in a process prints no Info lines on stdout: in a batch, another file (devices-camera, pipelines-video) loads it first",
};

/**
 * Seconds the longest files take in a batch (measured with two batches side by side; every other file counts 0.3 s, and
 * the first file of a batch also pays for loading what the others share). The batches are filled longest first, each file
 * into the batch with the fewest seconds so far, so they end together. A stale figure only costs wall time.
 */
const SECONDS: Record<string, number> = {
  'test/unit/house.test.ts': 13.2,
  'test/unit/inputs-vision.test.ts': 10.7,
  'test/unit/architecture.test.ts': 10.6,
  'test/unit/layers.test.ts': 9.6,
  'test/unit/provider-corpus.test.ts': 8.3,
  'test/unit/safety-properties.test.ts': 6.4,
  'test/unit/cortex-loop.test.ts': 5.5,
  'test/unit/actions-halt-order.test.ts': 4.2,
  'test/unit/serial-sim-gps.test.ts': 3.6,
  'test/unit/om1-corpus.test.ts': 2.8,
  'test/unit/modes-paths.test.ts': 2.8,
  'test/unit/pocketsphinx-close.test.ts': 2.8,
  'test/unit/devices-camera.test.ts': 2.6,
  'test/unit/config-corpus.test.ts': 2.5,
  'test/unit/knowledge-index.test.ts': 2.2,
  'test/unit/llm-partial-json.test.ts': 2,
};
const OTHER_SECONDS = 0.3;

interface TapConfig {
  serial: string[];
  exclude: string[];
}
const tapConfig = (): TapConfig => JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).tap;

/** Every test file of test/unit, in name order. */
const unitFiles = (): string[] =>
  readdirSync(join(ROOT, 'test', 'unit'))
    .filter((f) => f.endsWith('.test.ts'))
    .map((f) => `test/unit/${f}`)
    .sort();

/** The test/unit files that run alone: ALONE's and the serial ones. */
function aloneFiles(unit: string[]): string[] {
  const { serial } = tapConfig();
  return unit.filter((f) => f in ALONE || serial.some((s) => f === s || f.startsWith(`${s}/`)));
}

/**
 * package.json's `tap.exclude` entry that keeps tap from running the batched files again, one process each: every test/unit
 * file but the ones that run alone. A file named on tap's command line runs alone all the same (tap excludes only from
 * what it finds itself).
 */
export const excludePattern = (alone: string[]): string => `test/unit/!(${alone.map((f) => basename(f, '.test.ts')).join('|')}).test.ts`;

/** Batch `index` (1-based) of `count`: its files in name order. */
export function batchFiles(index: number, count: number): string[] {
  const unit = unitFiles();
  const alone = new Set(aloneFiles(unit));
  const load = new Array<number>(count).fill(0);
  const batches = load.map((): string[] => []);
  const seconds = (f: string) => SECONDS[f] ?? OTHER_SECONDS;
  const longestFirst = unit.filter((f) => !alone.has(f)).sort((a, b) => seconds(b) - seconds(a) || a.localeCompare(b));
  for (const f of longestFirst) {
    const i = load.indexOf(Math.min(...load));
    load[i] = (load[i] ?? 0) + seconds(f);
    batches[i]?.push(f);
  }
  return (batches[index - 1] ?? []).sort();
}

/** Changes a file may leave: state that is the process's by nature, made once per process, each with why. */
const PROCESS_WIDE: Array<[RegExp, string]> = [
  [
    /^process\.env\.OPENCV/,
    "loadOpenCV (src/vision/opencv.ts) sets OpenCV's variables before it loads the native module, once per process; later loads return that module",
  ],
];

/** A process-wide thing a test file could leave changed for the next file of its process: how to read it and put it back. */
interface Shared {
  name: string;
  read: () => unknown;
  putBack: (was: unknown) => void;
}

/** Properties of `owner` (called `label`) that a test could replace, as Shared things compared by identity. */
const properties = <T extends object>(label: string, owner: T, keys: Array<keyof T & string>): Shared[] =>
  keys.map((key) => ({ name: `${label}.${key}`, read: () => owner[key], putBack: (was) => void (owner[key] = was as T[typeof key]) }));

const SHARED: Shared[] = [
  { name: 'the working directory', read: () => process.cwd(), putBack: (was) => process.chdir(was as string) },
  ...properties('process', process, ['exitCode', 'emit', 'exit']),
  ...properties('process.stdout', process.stdout, ['write']),
  ...properties('process.stderr', process.stderr, ['write']),
  ...properties('globalThis', globalThis, ['Date', 'fetch', 'setTimeout', 'setInterval', 'setImmediate']),
  ...properties('Date', Date, ['now']),
  ...properties('Math', Math, ['random']),
  ...properties('performance', performance, ['now']),
  ...properties('console', console, ['log', 'error', 'warn', 'info']),
];

/** What the process looks like to a test file: the Shared things and the environment, by name. */
function processState(): Map<string, unknown> {
  const state = new Map<string, unknown>(SHARED.map((s) => [s.name, s.read()]));
  for (const [k, v] of Object.entries(process.env)) state.set(`process.env.${k}`, v);
  return state;
}

/** What differs from `before`, each put back as it was (the next file starts as it would in a process of its own). */
function putBack(before: Map<string, unknown>): string[] {
  const after = processState();
  const changed: string[] = [];
  for (const name of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(name);
    if (Object.is(was, after.get(name)) || PROCESS_WIDE.some(([changes]) => changes.test(name))) continue;
    changed.push(name);
    const variable = name.startsWith('process.env.') ? name.slice('process.env.'.length) : undefined;
    if (variable === undefined) SHARED.find((s) => s.name === name)?.putBack(was);
    else if (was === undefined) delete process.env[variable];
    else process.env[variable] = was as string;
  }
  return changed;
}

/** Symbol under which tap-of-file.mjs finds the subtest of each file, by its URL's path. */
const TESTS = Symbol.for('cortexd.unit-batch');

/**
 * Runs the batch whose file is `batchFile` (test/batches/unit-N.test.ts; the folder's number of such files is the count):
 * each of its unit files is imported inside a subtest named after it, and the file's `import t from 'tap'` is that subtest,
 * so its tests, top-level assertions and teardowns are the subtest's, and a failure shows under the file's name.
 */
export async function runUnitBatch(batchFile: string): Promise<void> {
  const name = /^unit-(\d+)\.test\.ts$/;
  const index = Number(basename(batchFile).match(name)?.[1]);
  const count = readdirSync(dirname(batchFile)).filter((f) => name.test(f)).length;
  const files = batchFiles(index, count);

  const pattern = excludePattern(aloneFiles(unitFiles()));
  if (!tapConfig().exclude.includes(pattern)) {
    t.fail(
      `package.json's tap.exclude must hold "${pattern}" (the test/unit files that run alone are not those it leaves out), or tap runs files twice or never`,
    );
  }

  // Each file keeps tap's limit for one file (its subtest's timeout). The process's own limit starts again with each file, and
  // after the last it has that limit to end, as a file's own process would: a handle left open cannot keep a batch alive for long.
  const perFile = Number(process.env.TAP_TIMEOUT || 30) * 1000;

  const tests = new Map<string, unknown>();
  (globalThis as Record<symbol, unknown>)[TESTS] = tests;
  register('./unit-batch/tap-hook.mjs', import.meta.url);

  for (const file of files) {
    const url = pathToFileURL(join(ROOT, file));
    const before = processState();
    t.setTimeout(perFile + 30_000);
    await t.test(file, { timeout: perFile }, async (sub) => {
      tests.set(url.pathname, sub);
      await import(url.href);
    });
    const changed = putBack(before);
    if (changed.length) t.fail(`${file} left the process changed for the next file (put back): ${changed.join(', ')}`);
  }
  t.setTimeout(perFile);
}
