// SLOW, one to three minutes (set-up builds the copy with tsc): the test command's set-up step, run in a throwaway clone, leaves the installed `cortexd` link as it was.
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freshCopy, npmGuard } from '../helpers/fresh-copy.js';

// dpkg-query per Debian package, tsc over the copy and the native modules' load check; a hang guard.
t.setTimeout(300_000);

/** What a path is now: a link's target, "file", or "absent" (an installed `cortexd` is a link). */
function pathState(path: string): string {
  try {
    return lstatSync(path).isSymbolicLink() ? `-> ${readlinkSync(path)}` : 'file';
  } catch {
    return 'absent';
  }
}

t.test('scripts/test.sh --setup-only in a throwaway clone changes no cortexd on PATH', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'cortexd-testcmd-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const clone = join(tmp, 'clone');
  freshCopy(clone);

  // The installation a person made earlier: `cortexd` in a bin directory, linked to their own checkout.
  const bin = join(tmp, 'bin');
  const installed = join(tmp, 'their-checkout', 'scripts', 'cortexd');
  mkdirSync(join(tmp, 'their-checkout', 'scripts'), { recursive: true });
  writeFileSync(installed, '#!/bin/sh\necho theirs\n', { mode: 0o755 });
  mkdirSync(bin);
  symlinkSync(installed, join(bin, 'cortexd'));
  const home = join(tmp, 'home');
  mkdirSync(home);
  // Where set-up would link without CORTEX_BIN_DIR: the machine's, watched (not written: --no-link).
  const machine = ['/usr/local/bin/cortexd', join(home, '.local/bin/cortexd')];
  const before = machine.map(pathState);

  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: '' };
  for (const k of Object.keys(env)) if (/^(CORTEX_|TAP|CONFIG$|NOTIFY_SOCKET$)/.test(k)) delete env[k];
  Object.assign(env, { CORTEX_BIN_DIR: bin, HOME: home, PATH: `${npmGuard(join(tmp, 'guard'))}:${bin}:${process.env.PATH}` });
  const run = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const child = spawn('bash', ['scripts/test.sh', '--setup-only'], { cwd: clone, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('close', (code) => resolve({ code, out }));
  });
  t.equal(run.code, 0, 'the set-up step succeeds', { output: run.out.slice(-3000) });
  t.ok(existsSync(join(clone, 'dist/cli/main.js')), 'it built the clone');
  t.equal(pathState(join(bin, 'cortexd')), `-> ${installed}`, 'the installed cortexd still points at the checkout it was installed from');
  t.same(machine.map(pathState), before, 'no cortexd link made or changed in /usr/local/bin or ~/.local/bin');
  t.match(
    run.out,
    /^setup: --no-link: the cortexd command on PATH is left as it is \(.*\/bin\/cortexd\); this checkout's is .*\/clone\/scripts\/cortexd$/m,
    'set-up says it left the link alone',
  );
  t.notMatch(run.out, /cortexd is (on PATH|in )/, 'and did not link');
});
