// A fresh clone's files in a temporary directory, sharing the installed node_modules, and an npm on PATH that refuses to change that install.
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, realpathSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const REPO = join(import.meta.dirname, '..', '..');

/** The checkout's files as git knows them (tracked and untracked, not ignored): no node_modules, dist or test output. */
function checkoutFiles(): string[] {
  const listed = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' });
  if (listed.status !== 0) throw new Error('not a git checkout: cannot tell the sources from build output');
  return listed.stdout.split('\0').filter((f) => f && !/^(node_modules|dist|test-output|\.tap)(\/|$)/.test(f) && existsSync(join(REPO, f)));
}

/**
 * A fresh clone's files (plus uncommitted ones) in `dest`, with the installed node_modules linked beside
 * them. Set-up reinstalls when package-lock.json is newer than the install, so the copy's lock file gets
 * the install's time (set-up then only builds); the install itself is shared, never changed (see npmGuard).
 */
export function freshCopy(dest: string): void {
  for (const file of checkoutFiles()) {
    mkdirSync(dirname(join(dest, file)), { recursive: true });
    cpSync(join(REPO, file), join(dest, file));
  }
  const modules = realpathSync(join(REPO, 'node_modules'));
  symlinkSync(modules, join(dest, 'node_modules'));
  const installed = statSync(join(modules, '.package-lock.json')).mtime;
  utimesSync(join(dest, 'package-lock.json'), installed, new Date(installed.getTime() - 60_000));
}

/**
 * An `npm` for the front of PATH, in `dir`, that refuses what would change the linked install (ci,
 * install, rebuild...) and runs the real npm for the rest (`npm run build`): a set-up that wanted to
 * reinstall fails the test with the reason instead of emptying the node_modules every other test uses.
 */
export function npmGuard(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const real = spawnSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).stdout.trim();
  if (!real) throw new Error('npm not found on PATH');
  writeFileSync(
    join(dir, 'npm'),
    `#!/bin/sh\ncase "$1" in ci|install|i|add|rebuild|uninstall|remove|update|prune|dedupe)\n  echo "fresh copy: refused npm $1 (node_modules is the shared install, linked): set-up should have found it up to date" >&2; exit 97 ;;\nesac\nexec ${JSON.stringify(real)} "$@"\n`,
    { mode: 0o755 },
  );
  return dir;
}
