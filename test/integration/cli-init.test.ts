// Proves `cortexd init NAME --template T`: each template writes a commented configuration that passes check (in config/ or another directory), refuses to overwrite, and a new companion runs.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireBuild } from '../helpers/requires.js';
import { MAIN } from '../helpers/agent-process.js';
import { TEMPLATES } from '../../cli/init.js';

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

/** `cortexd` as a person runs it in their own folder `cwd`, without CORTEX_CONFIG_DIR unless given. */
const inFolder = (cwd: string, args: string[], extra: Record<string, string> = {}) => {
  const env: NodeJS.ProcessEnv = { ...process.env, CORTEX_STATE_DIR: join(dir, 'state'), NO_COLOR: '1', CONFIG: '', ...extra };
  if (!extra.CORTEX_CONFIG_DIR) delete env.CORTEX_CONFIG_DIR;
  return spawnSync(process.execPath, [MAIN, ...args], { cwd, env, encoding: 'utf8', timeout: 60_000 });
};

t.test('init writes into config/ of the folder the person is in, and check and run find it there first', async (t) => {
  const proj = mkdtempSync(join(tmpdir(), 'cortexd-proj-'));
  t.teardown(() => rmSync(proj, { recursive: true, force: true }));
  const init = inFolder(proj, ['init', 'my_robot']);
  t.equal(init.status, 0, init.stdout + init.stderr);
  t.match(init.stdout, /^created config\/ \(the working directory\) for your configurations$/m, 'it says it made the folder');
  t.match(init.stdout, /^wrote config\/my_robot\.json5 from the companion template$/m);
  t.ok(existsSync(join(proj, 'config', 'my_robot.json5')), 'the file is in the folder the person is in');
  t.ok(existsSync(join(proj, 'config', 'hooks', 'greeting.js')), "the template's hook modules beside it");
  const check = inFolder(proj, ['check', 'my_robot']);
  t.equal(check.status, 0, check.stdout + check.stderr);
  t.match(check.stdout, /^ok: config\/my_robot\.json5 \(4 modes\)$/m, 'check finds it in ./config');
  // A file of the folder wins over a shipped one of the same name; the shipped ones stay reachable.
  writeFileSync(join(proj, 'config', 'default.json5'), readFileSync(join(proj, 'config', 'my_robot.json5'), 'utf8'));
  t.match(inFolder(proj, ['check', 'default']).stdout, /^ok: config\/default\.json5/m, "the folder's default first");
  t.match(inFolder(proj, ['check', 'conversation']).stdout, /^ok: \/.*\/config\/conversation\.json5/m, 'the shipped conversation next');
  const run = inFolder(proj, ['run', 'my_robot', '--for', '3s', '--events', '--fresh']);
  t.equal(run.status, 0, run.stderr.slice(-2000));
  t.match(run.stdout, /"type":"agent.started","at":\d+,"config":"my_robot"/, 'run finds it too');
});

t.test('a name that is nowhere: the places looked in are printed; CORTEX_CONFIG_DIR that does not exist is said plainly', async (t) => {
  const proj = mkdtempSync(join(tmpdir(), 'cortexd-proj-'));
  t.teardown(() => rmSync(proj, { recursive: true, force: true }));
  const missing = inFolder(proj, ['check', 'my_robt']);
  t.equal(missing.status, 2);
  t.match(missing.stderr + missing.stdout, /no configuration named "my_robt"; looked in \.\/config, \/.*\/config; known: .*conversation.*default/);
  t.match(missing.stderr + missing.stdout, /cortexd init my_robt makes one in \.\/config\)/);
  const nowhere = join(proj, 'not', 'yet');
  const check = inFolder(proj, ['check', 'my_robot'], { CORTEX_CONFIG_DIR: nowhere });
  t.equal(check.status, 2);
  t.match(check.stderr + check.stdout, new RegExp(`CORTEX_CONFIG_DIR names ${nowhere}, which does not exist \\(cortexd init NAME creates it\\)`));
  t.notMatch(check.stderr + check.stdout, /ENOENT/, 'no raw system error');
  const init = inFolder(proj, ['init', 'my_robot'], { CORTEX_CONFIG_DIR: nowhere });
  t.equal(init.status, 0, init.stdout + init.stderr);
  t.match(init.stdout, /^created .*not\/yet\/ \(CORTEX_CONFIG_DIR\) for your configurations$/m);
  t.ok(existsSync(join(nowhere, 'my_robot.json5')));
});
