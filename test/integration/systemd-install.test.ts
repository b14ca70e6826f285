// Proves systemd/install.sh into a temporary root installs a production tree (no dev dependencies, no build files), is idempotent, keeps edits, uninstalls, and that both units pass systemd-analyze verify.
import t from 'tap';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const repo = join(import.meta.dirname, '../..');
const script = join(repo, 'systemd/install.sh');
const analyze = '/usr/bin/systemd-analyze';
const isRoot = process.getuid?.() === 0;

/**
 * A small built package: what install.sh copies, without the real 300 MB of node_modules. Its
 * node_modules holds a production dependency shaped like a native module (sources, objects and a
 * compiled .node in build/) and a dev dependency, with the lockfile that tells npm which is which.
 */
function fakeSource(dir: string): string {
  const src = join(dir, 'src');
  mkdirSync(join(src, 'dist/cli'), { recursive: true });
  // Prints its arguments, and with `env` two of the allocator settings it was started with.
  writeFileSync(
    join(src, 'dist/cli/main.js'),
    "console.log(JSON.stringify(process.argv.slice(2)));\nif (process.argv[2] === 'env') console.log(process.env.MALLOC_ARENA_MAX ?? '(unset)', process.env.MALLOC_MMAP_THRESHOLD_ ?? '(unset)');\n",
  );
  const dep = join(src, 'node_modules/dep');
  mkdirSync(join(dep, 'build/Release/obj.target/dep/src'), { recursive: true });
  mkdirSync(join(dep, 'src'));
  writeFileSync(join(dep, 'package.json'), '{ "name": "dep", "version": "1.0.0", "main": "index.js" }\n');
  writeFileSync(join(dep, 'index.js'), 'export default 1;\n');
  writeFileSync(join(dep, 'index.d.ts'), 'declare const x: number;\nexport default x;\n');
  writeFileSync(join(dep, 'index.js.map'), '{}\n');
  writeFileSync(join(dep, 'binding.gyp'), "{ 'targets': [] }\n");
  writeFileSync(join(dep, 'src/dep.cc'), '// C++ source\n');
  writeFileSync(join(dep, 'build/Makefile'), 'all:\n');
  writeFileSync(join(dep, 'build/Release/obj.target/dep/src/dep.o'), 'object');
  writeFileSync(join(dep, 'build/Release/dep.node'), 'compiled module');
  mkdirSync(join(src, 'node_modules/devdep'), { recursive: true });
  writeFileSync(join(src, 'node_modules/devdep/package.json'), '{ "name": "devdep", "version": "2.0.0" }\n');
  writeFileSync(join(src, 'node_modules/devdep/index.js'), 'export default 2;\n');
  mkdirSync(join(src, 'config/hooks'), { recursive: true });
  writeFileSync(join(src, 'config/default.json5'), '{ name: "default" }\n');
  writeFileSync(join(src, 'config/hooks/greet.mjs'), 'export function greet() {}\n');
  const manifest = { name: 'cortexd', version: '0.0.1', type: 'module', dependencies: { dep: '1.0.0' }, devDependencies: { devdep: '2.0.0' } };
  writeFileSync(join(src, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  const lock = {
    name: 'cortexd',
    version: '0.0.1',
    lockfileVersion: 3,
    requires: true,
    packages: {
      '': { name: 'cortexd', version: '0.0.1', dependencies: { dep: '1.0.0' }, devDependencies: { devdep: '2.0.0' } },
      'node_modules/dep': { version: '1.0.0' },
      'node_modules/devdep': { version: '2.0.0', dev: true },
    },
  };
  writeFileSync(join(src, 'package-lock.json'), `${JSON.stringify(lock, null, 2)}\n`);
  mkdirSync(join(src, 'systemd'));
  for (const f of ['cortexd@.service', 'cortexd-cloud.service', 'runtime.env', 'runtime-env.sh'])
    copyFileSync(join(repo, 'systemd', f), join(src, 'systemd', f));
  return src;
}

function run(args: string[]): { code: number; out: string } {
  const r = spawnSync('bash', [script, ...args], { encoding: 'utf8' });
  return { code: r.status ?? -1, out: `${r.stdout}${r.stderr}` };
}

/** Every path under dir with its type, mode, content hash and mtime: "changes nothing" means this is equal. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string): void => {
    const st = lstatSync(p);
    const rel = p.slice(dir.length) || '/';
    if (st.isDirectory()) {
      out[rel] = `dir ${st.mode.toString(8)}`;
      for (const e of readdirSync(p).sort()) walk(join(p, e));
    } else {
      const hash = st.isFile() ? createHash('sha256').update(readFileSync(p)).digest('hex').slice(0, 16) : 'link';
      out[rel] = `${st.mode.toString(8)} ${st.uid}:${st.gid} ${hash} ${st.mtimeMs}`;
    }
  };
  walk(dir);
  return out;
}

function realUserExists(name: string): boolean {
  return spawnSync('getent', ['passwd', name]).status === 0;
}

t.test('install.sh --prefix installs, is idempotent, keeps edits and uninstalls', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'cortexd-install-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const src = fakeSource(tmp);
  const root = join(tmp, 'root');
  const hadRealUser = realUserExists('cortexd');
  const args = ['--prefix', root, '--source', src, '--node', process.execPath];

  const first = run(args);
  t.equal(first.code, 0, first.out);
  t.match(first.out, /systemctl enable --now cortexd@NAME/, 'prints the enable command');

  const opt = join(root, 'opt/cortexd');
  t.equal(readFileSync(join(opt, 'dist/cli/main.js'), 'utf8'), readFileSync(join(src, 'dist/cli/main.js'), 'utf8'));
  t.ok(existsSync(join(opt, 'node_modules/dep/index.js')), 'production dependencies are installed');
  t.notOk(existsSync(join(opt, 'node_modules/devdep')), 'dev dependencies are not');
  t.ok(existsSync(join(src, 'node_modules/devdep')), 'the source tree is left as it was');
  t.ok(existsSync(join(opt, 'node_modules/dep/build/Release/dep.node')), 'the compiled module is kept');
  for (const gone of ['build/Makefile', 'build/Release/obj.target', 'src/dep.cc', 'index.d.ts', 'index.js.map']) {
    t.notOk(existsSync(join(opt, 'node_modules/dep', gone)), `no ${gone} in the production tree`);
  }
  t.match(first.out, /installed size: \d+ MB in \S+opt\/cortexd \(node_modules \d+ MB/, 'prints the installed size');
  const launched = execFileSync(join(opt, 'bin/cortexd'), ['run', 'spot'], { encoding: 'utf8' });
  t.equal(launched.trim(), '["run","spot"]', 'bin/cortexd runs the compiled CLI with its arguments');
  // The launcher applies systemd/runtime.env to what the caller left unset; the caller's value wins.
  const shipped = readFileSync(join(repo, 'systemd/runtime.env'), 'utf8');
  const arenas = /^MALLOC_ARENA_MAX=(.+)$/m.exec(shipped)?.[1];
  const mmap = /^MALLOC_MMAP_THRESHOLD_=(.+)$/m.exec(shipped)?.[1];
  t.ok(arenas && mmap, 'runtime.env sets the allocator');
  const { MALLOC_ARENA_MAX: _a, MALLOC_MMAP_THRESHOLD_: _m, MALLOC_TRIM_THRESHOLD_: _t, ...bare } = process.env;
  const envOf = (env: NodeJS.ProcessEnv) => execFileSync(join(opt, 'bin/cortexd'), ['env'], { encoding: 'utf8', env }).split('\n')[1];
  t.equal(envOf(bare), `${arenas} ${mmap}`, 'unset variables get the shipped defaults');
  t.equal(envOf({ ...bare, MALLOC_ARENA_MAX: '1' }), `1 ${mmap}`, "the caller's value is kept, the others still set");
  t.equal(envOf({ ...bare, MALLOC_ARENA_MAX: '' }), ` ${mmap}`, 'a variable set empty counts as set');

  const env = join(root, 'etc/cortexd/env');
  t.equal(statSync(env).mode & 0o777, 0o600, 'env file is 0600');
  t.match(readFileSync(env, 'utf8'), /^OM_API_KEY=$/m);
  t.ok(existsSync(join(root, 'etc/cortexd/config/default.json5')));
  t.ok(existsSync(join(root, 'etc/cortexd/config/hooks/greet.mjs')));

  for (const unit of ['cortexd@.service', 'cortexd-cloud.service']) {
    const text = readFileSync(join(root, 'etc/systemd/system', unit), 'utf8');
    t.match(text, `ExecStart=${opt}/bin/cortexd`, `${unit} runs the prefixed launcher`);
    t.match(text, `EnvironmentFile=-${root}/etc/cortexd/env`);
  }
  t.match(readFileSync(join(root, 'etc/systemd/system/cortexd@.service'), 'utf8'), /ExecStart=\S+ run %i$/m);

  if (isRoot) {
    const passwd = readFileSync(join(root, 'etc/passwd'), 'utf8');
    t.match(passwd, /^cortexd:x:\d+:\d+:[^:]*:\/var\/lib\/cortexd:\/usr\/sbin\/nologin$/m, 'user created in the prefix');
    const group = readFileSync(join(root, 'etc/group'), 'utf8');
    for (const g of ['audio', 'video', 'dialout']) t.match(group, new RegExp(`^${g}:x:\\d+:(.*,)?cortexd(,.*)?$`, 'm'), `cortexd in ${g}`);
  }
  t.equal(realUserExists('cortexd'), hadRealUser, 'no real user created');

  const before = snapshot(root);
  const second = run(args);
  t.equal(second.code, 0, second.out);
  t.same(snapshot(root), before, 'a second run changes nothing');
  t.match(second.out, /up to date/);
  t.notMatch(second.out, /wrote|created|added/);

  writeFileSync(env, 'OM_API_KEY=key_live_edited\n', { mode: 0o600 });
  writeFileSync(join(root, 'etc/cortexd/config/default.json5'), '{ name: "mine" }\n');
  writeFileSync(join(src, 'dist/cli/main.js'), 'console.log("v2");\n');
  const third = run(args);
  t.equal(third.code, 0, third.out);
  t.equal(readFileSync(env, 'utf8'), 'OM_API_KEY=key_live_edited\n', 'an edited env file is kept');
  t.equal(readFileSync(join(root, 'etc/cortexd/config/default.json5'), 'utf8'), '{ name: "mine" }\n', 'an edited config is kept');
  t.equal(execFileSync(join(opt, 'bin/cortexd'), [], { encoding: 'utf8' }).trim(), 'v2', 'a new build is installed');

  const un = run(['--prefix', root, '--uninstall']);
  t.equal(un.code, 0, un.out);
  t.notOk(existsSync(opt), 'package removed');
  t.notOk(existsSync(join(root, 'etc/systemd/system/cortexd@.service')), 'units removed');
  t.ok(existsSync(env), 'secrets kept without --purge');
  const purge = run(['--prefix', root, '--uninstall', '--purge']);
  t.equal(purge.code, 0, purge.out);
  t.notOk(existsSync(join(root, 'etc/cortexd')), '--purge removes /etc/cortexd');
  if (isRoot) t.notMatch(readFileSync(join(root, 'etc/passwd'), 'utf8'), /^cortexd:/m, '--purge removes the user');
});

t.test('install.sh refuses a source that was not built', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'cortexd-install-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const src = fakeSource(tmp);
  rmSync(join(src, 'dist'), { recursive: true });
  const r = run(['--prefix', join(tmp, 'root'), '--source', src, '--node', process.execPath]);
  t.not(r.code, 0);
  t.match(r.out, /npm run build/);
});

t.test('both units pass systemd-analyze verify', async (t) => {
  const tmp = mkdtempSync(join(tmpdir(), 'cortexd-verify-'));
  t.teardown(() => rmSync(tmp, { recursive: true, force: true }));
  const root = join(tmp, 'root');
  // verify checks that ExecStart exists, so the units are verified as installed into a temporary root.
  const r = run(['--prefix', root, '--source', fakeSource(tmp), '--node', process.execPath]);
  t.equal(r.code, 0, r.out);
  const verify = (file: string): { code: number; out: string } => {
    const v = spawnSync(analyze, ['verify', '--man=no', file], { encoding: 'utf8', cwd: join(root, 'etc/systemd/system') });
    return { code: v.status ?? -1, out: `${v.stdout}${v.stderr}`.trim() };
  };
  for (const unit of ['cortexd@.service', 'cortexd-cloud.service']) {
    const v = verify(`./${unit}`);
    t.equal(v.code, 0, `${unit} verifies`);
    t.equal(v.out, '', `${unit}: no warnings (unknown keys only warn)`);
  }
  // The check can fail: a misspelt key is reported.
  const bad = join(root, 'etc/systemd/system/cortexd-bad.service');
  writeFileSync(bad, readFileSync(join(root, 'etc/systemd/system/cortexd-cloud.service'), 'utf8').replace('DevicePolicy=', 'DevicePolicyy='));
  t.match(verify('./cortexd-bad.service').out, /Unknown key 'DevicePolicyy'/);
});

t.test('install.sh is shellcheck-clean', async (t) => {
  const r = spawnSync('shellcheck', [script], { encoding: 'utf8' });
  t.equal(r.status, 0, r.stdout);
});
