// Proves which files a configuration load reads: regular files only after symlinks, the size limit on bytes read, a FIFO refused at once.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import JSON5 from 'json5';
import { MAX_CONFIG_BYTES } from '../../src/config/load.js';
import { configEnvironment } from '../../src/config/env.js';
import { tempDir, tryLoad, validConfig, writeConfig } from '../helpers/config-fixtures.js';
import { tsLoaderArgs } from '../helpers/ts-loader.js';

const MAIN = fileURLToPath(new URL('../../cli/main.ts', import.meta.url));

function mkfifo(path: string): void {
  const r = spawnSync('mkfifo', [path]);
  if (r.status !== 0) throw new Error(`mkfifo failed: ${r.stderr}`);
}

/** `cortexd check --config <file>` from the sources, with a deadline: a hang is a failure, not a stuck suite. */
function check(file: string, env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [...tsLoaderArgs, MAIN, 'check', '--config', file], {
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1', ...env },
  });
  return { status: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

t.test('a symlink to /dev/zero is refused by kind, before reading anything', async (t) => {
  const dir = tempDir(t);
  const link = join(dir, 'zero.json5');
  symlinkSync('/dev/zero', link);
  const r = await tryLoad(link);
  t.same(!r.ok && r.lines, ['is a character device, not a regular file']);
  const cli = check(link);
  t.equal(cli.signal, null, 'the check finished on its own');
  t.equal(cli.status, 2, 'exit 2: invalid configuration');
  t.equal(cli.stdout, `${link}: is a character device, not a regular file\n`);
});

t.test('a FIFO is refused at once, with or without a writer', async (t) => {
  const dir = tempDir(t);
  const fifo = join(dir, 'pipe.json5');
  mkfifo(fifo);
  const r = await tryLoad(fifo);
  t.same(!r.ok && r.lines, ['is a FIFO (named pipe), not a regular file']);
  const cli = check(fifo);
  t.equal(cli.signal, null, 'no hang waiting for a writer');
  t.equal(cli.status, 2);
  t.equal(cli.stdout, `${fifo}: is a FIFO (named pipe), not a regular file\n`);
});

t.test('the size limit is checked on what is read; a symlink to a regular file is read normally', async (t) => {
  const dir = tempDir(t);
  const big = join(dir, 'big.json5');
  writeFileSync(big, `// ${'x'.repeat(MAX_CONFIG_BYTES)}\n{}`);
  const r = await tryLoad(big);
  t.same(!r.ok && r.lines, [`file is larger than the limit of ${MAX_CONFIG_BYTES} bytes`]);
  const link = join(dir, 'link.json5');
  symlinkSync(writeConfig(dir, 'real', JSON5.stringify(validConfig())), link);
  const ok = await tryLoad(link);
  t.ok(ok.ok, 'a link to a regular file loads');
  const loop = join(dir, 'loop.json5');
  symlinkSync(loop, loop);
  const l = await tryLoad(loop);
  t.same(!l.ok && l.lines, ['symbolic link loop']);
});

t.test('a .env that is a FIFO or a device is skipped, never waited on', async (t) => {
  const dir = tempDir(t);
  const fifo = join(dir, 'pipe.env');
  mkfifo(fifo);
  t.same(configEnvironment({ CORTEX_ENV_FILE: fifo, ONLY: 'env' }), { CORTEX_ENV_FILE: fifo, ONLY: 'env' });
  t.same(configEnvironment({ CORTEX_ENV_FILE: '/dev/zero', ONLY: 'env' }), { CORTEX_ENV_FILE: '/dev/zero', ONLY: 'env' });
  const good = join(dir, 'good.env');
  writeFileSync(good, 'FROM_FILE=yes\n');
  t.same(configEnvironment({ CORTEX_ENV_FILE: good }), { FROM_FILE: 'yes', CORTEX_ENV_FILE: good });
});
