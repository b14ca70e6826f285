// Proves `cortexd init NAME --template T`: each template writes a commented configuration that passes check (in config/ or another directory), refuses to overwrite, and a new companion runs.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBuild } from '../helpers/requires.js';
import { MAIN } from '../helpers/agent-process.js';
import { TEMPLATES } from '../../src/cli/init.js';

requireBuild();
const dir = mkdtempSync(join(tmpdir(), 'cortexd-init-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const cortexd = (...args: string[]) =>
  spawnSync(process.execPath, [MAIN, ...args], {
    cwd: tmpdir(),
    env: { ...process.env, CORTEX_CONFIG_DIR: dir, CORTEX_STATE_DIR: join(dir, 'state'), CORTEX_WEBSIM_PORT: '0', NO_COLOR: '1', CONFIG: '' },
    encoding: 'utf8',
    timeout: 60_000,
  });

for (const template of Object.keys(TEMPLATES)) {
  t.test(`template ${template}: written, commented, passes check without warnings`, async (t) => {
    const name = `my_${template.replace('-', '_')}`;
    const r = cortexd('init', name, '--template', template);
    t.equal(r.status, 0, r.stdout + r.stderr);
    t.match(r.stdout, new RegExp(`ok: .*${name}\\.json5`));
    t.equal(r.stderr, '', 'no warnings');
    const text = readFileSync(join(dir, `${name}.json5`), 'utf8');
    t.match(text, new RegExp(`^// ${name}: made by \`cortexd init ${name} --template ${template}\``));
    t.match(text, new RegExp(`name: "${name}",`));
  });
}

t.test('an existing file is kept; an unknown template lists the known ones', async (t) => {
  const again = cortexd('init', 'my_companion');
  t.equal(again.status, 1);
  t.match(again.stderr, /exists; pick another name, or --force to replace it/);
  const bad = cortexd('init', 'x', '--template', 'robot');
  t.equal(bad.status, 2);
  t.match(bad.stderr, /unknown template "robot"; known: companion, serial-robot, voice, mcp/);
});

t.test('the new companion runs', async (t) => {
  const r = cortexd('run', 'my_companion', '--for', '3s', '--events', '--fresh');
  t.equal(r.status, 0, r.stderr.slice(-2000));
  t.match(r.stdout, /"type":"agent.started","at":\d+,"config":"my_companion"/);
});

t.test('init never writes through a symbolic link, --force or not: the link target is untouched', async (t) => {
  const victim = join(dir, 'victim.txt');
  writeFileSync(victim, 'precious\n');
  symlinkSync(victim, join(dir, 'linked.json5'));
  for (const args of [
    ['init', 'linked', '--force'],
    ['init', 'linked'],
  ]) {
    const r = cortexd(...args);
    t.equal(r.status, 1, `${args.join(' ')}: refused`);
    t.match(r.stderr, /linked\.json5 is a symbolic link \(to .*victim\.txt\); init never writes through a link, even with --force: remove the link first/);
  }
  t.equal(readFileSync(victim, 'utf8'), 'precious\n', 'the target is unchanged');
  t.ok(lstatSync(join(dir, 'linked.json5')).isSymbolicLink(), 'the link is left as it was');
  symlinkSync(join(dir, 'nowhere.txt'), join(dir, 'dangling.json5'));
  const dangling = cortexd('init', 'dangling', '--force');
  t.equal(dangling.status, 1, 'a dangling link is refused too');
  t.notOk(existsSync(join(dir, 'nowhere.txt')), 'and nothing is created where it points');
});
