// A benchmark's run: `--quick` and its options, every child process it starts tracked and ended (also on an error or Ctrl-C), and its verdict line.
import * as childProcess from 'node:child_process';
import { dirname, resolve } from 'node:path';

/**
 * `--quick`: the same code paths with fewer trials and seconds, so that the test suite can run every
 * benchmark in a few seconds (test/integration/bench-quick.test.ts). Its figures are not the figures.
 */
export const quick = process.argv.includes('--quick');

/**
 * The value of `--name V` on the command line (a number when it reads as one), else `quickValue`
 * under `--quick`, else `full`. `option('trials', 200, 20)`.
 */
export function option(name, full, quickValue = full) {
  const flag = name.startsWith('--') ? name : `--${name}`;
  const i = process.argv.indexOf(flag);
  if (i > 0 && i + 1 < process.argv.length) {
    const raw = process.argv[i + 1];
    return raw !== '' && Number.isFinite(Number(raw)) ? Number(raw) : raw;
  }
  return quick ? quickValue : full;
}

/** The live children this run started (through `spawn`, `fork` or `track`). */
const children = new Set();
/** Clean-ups registered with `onCleanup`, run last first. */
const cleanups = [];

/** Tracks a child process: it is ended when the benchmark ends, however it ends. Returns it. */
export function track(child) {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** `child_process.spawn`, tracked: import it from here instead of `node:child_process`. */
export const spawn = (...args) => track(childProcess.spawn(...args));
/** `child_process.fork`, tracked. */
export const fork = (...args) => track(childProcess.fork(...args));

/** Runs `fn` (may be async) when the benchmark ends: a stopped agent, a closed port, a removed directory. */
export function onCleanup(fn) {
  cleanups.push(fn);
}

const alive = (child) => child.exitCode === null && child.signalCode === null;

/** Ends every tracked child still running: SIGTERM, then SIGKILL after `graceMs`; resolves when all have exited. */
export async function endChildren(graceMs = 5000) {
  const live = [...children].filter(alive);
  await Promise.all(
    live.map(
      (child) =>
        new Promise((resolve) => {
          if (!alive(child)) return resolve();
          const timer = setTimeout(() => alive(child) && child.kill('SIGKILL'), graceMs);
          child.once('exit', () => {
            clearTimeout(timer);
            resolve();
          });
          child.kill('SIGTERM');
        }),
    ),
  );
}

let ending;
/** Runs the clean-ups (last first; a failing one is reported, the rest still run), then ends the children. Idempotent. */
export function cleanUp() {
  ending ??= (async () => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        console.error(`bench clean-up failed: ${err?.message ?? err}`);
      }
    }
    await endChildren();
  })();
  return ending;
}

/** Cleans up, then exits with `code`. A benchmark's last statement. */
export async function finish(code = 0) {
  await cleanUp();
  process.exit(code);
}

/**
 * Prints the verdict line (the benchmark's last line): `SUMMARY; within target`, or `SUMMARY; MISSED
 * target: WHY; WHY` when `missed` (strings, empty when every target was met) says why not.
 */
export function verdict(summary, missed) {
  const line = missed.length ? `${summary}; MISSED target: ${missed.join('; ')}` : `${summary}; within target`;
  console.log(quick ? `(quick) ${line}` : line);
  return line;
}

/** Whether this process runs a benchmark (not a test importing a benchmark's library): only then are the process's handlers installed. */
const isBench = process.argv[1] !== undefined && dirname(resolve(process.argv[1])) === resolve(import.meta.dirname, '..');

// However the run ends, nothing it started keeps running.
if (isBench) installHandlers();

function installHandlers() {
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ]) {
    process.once(signal, () => {
      console.error(`bench: ${signal}, cleaning up`);
      void cleanUp().finally(() => process.exit(code));
    });
  }
  process.on('uncaughtException', (err) => {
    console.error(`bench failed: ${err?.stack ?? err}`);
    void cleanUp().finally(() => process.exit(1));
  });
  process.on('unhandledRejection', (err) => {
    console.error(`bench failed: ${err?.stack ?? err}`);
    void cleanUp().finally(() => process.exit(1));
  });
  // process.exit() with children still running (a path that did not call finish): the last resort is synchronous.
  process.on('exit', () => {
    for (const child of children) if (alive(child)) child.kill('SIGKILL');
  });
}
