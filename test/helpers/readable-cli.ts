// A copy of the built CLI that another user can read: a fresh clone may sit under a 0700 directory (root's home, mktemp -d), where `nobody` reads nothing.
import { chmodSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * Copies what `cortexd estop` runs (dist/cli, dist/src, package.json, and commander, its one dependency) into a
 * world-readable temporary directory, removed when `t` ends; returns the copy's main.js. The command
 * must run without NODE_OPTIONS: tap's loader there lives in the checkout too (see `asOtherUser`).
 */
export function readableCli(t: { teardown: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-cli-copy-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(join(ROOT, 'dist', 'cli'), join(dir, 'dist', 'cli'), { recursive: true });
  cpSync(join(ROOT, 'dist', 'src'), join(dir, 'dist', 'src'), { recursive: true });
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  cpSync(join(ROOT, 'node_modules', 'commander'), join(dir, 'node_modules', 'commander'), { recursive: true, dereference: true });
  chmodSync(dir, 0o755);
  return join(dir, 'dist', 'cli', 'main.js');
}

/** The environment for a command run as another user: without the test runner's loader options. */
export function otherUserEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...extra };
  delete env.NODE_OPTIONS;
  return env;
}

/**
 * `setpriv` arguments that run `node ...args` as `uid` (primary group `gid`, supplementary `groups`)
 * without NODE_OPTIONS. Deleting it from the environment is not enough: tap's process tracker
 * (@tapjs/processinfo) puts its loader, a file of this checkout, back into every child's NODE_OPTIONS,
 * and another user cannot read a checkout under a 0700 directory. `env -u` drops it after setpriv.
 */
export function asOtherUser(as: { uid: number; gid?: number; groups?: number[] }, nodeArgs: string[]): { cmd: string; args: string[] } {
  const groups = as.groups?.length ? `--groups=${as.groups.join(',')}` : '--clear-groups';
  return {
    cmd: 'setpriv',
    args: [`--reuid=${as.uid}`, `--regid=${as.gid ?? as.uid}`, groups, 'env', '-u', 'NODE_OPTIONS', process.execPath, ...nodeArgs],
  };
}
