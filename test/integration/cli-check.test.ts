// Proves the built `cortexd` CLI: check (ok, problems, syntax error, --all), list-configs, modes of a legacy file, and a current config/schema.json.
import { requireBuild } from '../helpers/requires.js';
import t, { type Test } from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { descriptors } from '../../src/plugins/index.js';
import { legacyConfig, mode, tempDir, validConfig, writeConfig } from '../helpers/config-fixtures.js';

const { llms } = descriptors;

const ROOT = projectRoot();
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');

requireBuild();
{
  const configDir = tempDir(t, 'cortexd-cli-');

  /** Runs the built CLI with a controlled environment; returns exit code and output lines. */
  const cortexd = (...args: string[]) => {
    const env: NodeJS.ProcessEnv = { ...process.env, CORTEX_CONFIG_DIR: configDir, CORTEX_ENV_FILE: join(configDir, 'none.env'), NO_COLOR: '1' };
    for (const k of ['OM_API_KEY', 'URID', 'CONFIG', 'CORTEX_DEBUG', 'CORTEX_BASE_URL', 'CORTEX_WS_BASE_URL', 'CORTEX_ASR_WS_URL', 'CORTEX_VLM_WS_URL'])
      delete env[k];
    const r = spawnSync(process.execPath, [MAIN, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 30_000 });
    const lines = (s: string) => s.split('\n').filter((l) => l !== '');
    return { code: r.status, stdout: r.stdout, stderr: r.stderr, out: lines(r.stdout), err: lines(r.stderr) };
  };
  const noStack = (t: Test, r: { stdout: string; stderr: string }) => t.notMatch(r.stdout + r.stderr, /\n\s+at /, 'no stack trace');

  const llm = llms.names()[0]!;
  /** Valid for the CLI: a known model, no inputs or actions, the embedded service. */
  const cliValid = (extra: Record<string, unknown> = {}) => validConfig({ cortex_llm: { type: llm }, service: { base_url: 'embedded' }, ...extra });

  writeConfig(configDir, 'good', cliValid());
  writeConfig(configDir, 'bad', cliValid({ modes: { guard: mode({ hertz: 'fast' }), rest: mode() }, default_mode: 'nowhere' }));
  writeConfig(configDir, 'legacy_bot', legacyConfig({ cortex_llm: { type: llm }, agent_inputs: [], agent_actions: [], service: { base_url: 'embedded' } }));

  t.test('check NAME on a valid configuration: ok line, exit 0', async (t) => {
    const r = cortexd('check', 'good');
    t.equal(r.code, 0, r.stdout + r.stderr);
    t.match(r.out, [/^ok: .*good\.json5 \(2 modes\)$/]);
    t.same(r.err, [], 'no warnings for a clean file');
  });

  t.test('check with problems: exit 2, one `file:line:column: path: message` line each on stdout, no stack', async (t) => {
    const r = cortexd('check', 'bad');
    t.equal(r.code, 2);
    const file = join(configDir, 'bad.json5');
    t.same(r.out, [`${file}:17:7: modes.guard.hertz: expected a number, got "fast"`]);
    noStack(t, r);
    const cross = cortexd('check', '--config', writeConfig(tempDir(t), 'cross', cliValid({ default_mode: 'nowhere' })));
    t.equal(cross.code, 2);
    t.match(cross.out, [/cross\.json5:\d+:\d+: default_mode: "nowhere" is not a mode; known modes: "guard", "rest"$/]);
  });

  t.test('warnings go to stderr as `warning: ...`; the check still passes', async (t) => {
    const r = cortexd('check', '--config', writeConfig(tempDir(t), 'warned', cliValid({ version: 'v1.2.0' })));
    t.equal(r.code, 0, r.stdout + r.stderr);
    t.equal(r.err.length, 1);
    t.ok(r.err.every((l) => l.startsWith('warning: ')));
    t.match(r.stderr, /version: version v1\.2\.0 is newer than this runtime knows/);
  });

  t.test('an unknown field fails the check, named with what to do (nothing is silently ignored)', async (t) => {
    const r = cortexd('check', '--config', writeConfig(tempDir(t), 'unknown', cliValid({ colour: 'red' })));
    t.equal(r.code, 2, r.stdout + r.stderr);
    t.match(
      r.stdout,
      /colour: unknown field: this runtime does not carry it out \(remove it; `cortexd schema` lists the fields it reads; an OM1 file runs with --om1\)/,
    );
  });

  t.test('a JSON5 syntax error names file, line and column', async (t) => {
    const file = writeConfig(tempDir(t), 'syntax', '{\n  version: "v1.0.5",\n  name: "x"\n  hertz: 1,\n}\n');
    const r = cortexd('check', '--config', file);
    t.equal(r.code, 2);
    t.same(r.out, [
      `${file}:3:12: a comma is missing at the end of line 3: entries of an object or a list are separated by commas (the JSON5 parser stopped at line 4, column 3: invalid character 'h')`,
    ]);
    noStack(t, r);
  });

  t.test('unknown names, missing files and bad names are one line, exit 2', async (t) => {
    const missing = cortexd('check', 'does_not_exist');
    t.equal(missing.code, 2);
    t.equal(missing.out.length, 1);
    t.match(missing.out[0], `${join(configDir, 'does_not_exist.json5')}: no configuration named "does_not_exist"; looked in ${configDir}; known: bad, `);
    t.match(missing.out[0], /good, legacy_bot.* \(or pass --config PATH; cortexd init does_not_exist makes one in .*\)$/);
    // A path goes where a name goes (as OM1's loader reads it): one that is not there is a missing file.
    const traversal = cortexd('check', '../etc/passwd');
    t.equal(traversal.code, 2);
    t.match(traversal.out, [/etc\/passwd: file not found/]);
    const dots = cortexd('check', 'x..y');
    t.equal(dots.code, 2);
    t.match(dots.out, [/not a configuration name/]);
    noStack(t, traversal);
  });

  t.test('check --all checks every file of CORTEX_CONFIG_DIR and exits 2 if any is bad', async (t) => {
    const r = cortexd('check', '--all');
    t.equal(r.code, 2);
    t.ok(
      r.out.some((l) => l.startsWith(`${join(configDir, 'bad.json5')}:17:7: modes.guard.hertz:`)),
      'the bad file is reported',
    );
    if (llm !== undefined) {
      t.ok(
        r.out.some((l) => /^ok: .*good\.json5 \(2 modes\)$/.test(l)),
        'the good file is ok',
      );
      t.ok(
        r.out.some((l) => /^ok: .*legacy_bot\.json5 \(1 mode, converted from single-mode\)$/.test(l)),
        'the legacy file is ok',
      );
    }
    noStack(t, r);
    const empty = spawnSync(process.execPath, [MAIN, 'check', '--all'], { env: { ...process.env, CORTEX_CONFIG_DIR: tempDir(t) }, encoding: 'utf8' });
    t.equal(empty.status, 2, 'an empty directory is a problem, not a silent success');
  });

  t.test('list-configs prints the names in CORTEX_CONFIG_DIR, sorted', async (t) => {
    const r = cortexd('list-configs');
    t.equal(r.code, 0);
    t.same(r.out, ['bad', 'good', 'legacy_bot']);
  });

  t.test('modes NAME prints the converted form of a legacy file', async (t) => {
    const r = cortexd('modes', 'legacy_bot');
    t.equal(r.code, 0, r.stdout + r.stderr);
    t.match(r.stdout, /configuration: legacy_bot \(converted from a single-mode file\)/);
    t.match(r.stdout, /default mode: greeter\s+manual switching: off\s+mode memory: off/);
    t.match(r.stdout, /greeter \*/);
    t.match(r.stdout, /transition rules: none/);
    const json = cortexd('modes', 'legacy_bot', '--json');
    const config = JSON.parse(json.stdout) as { modes: Record<string, unknown>; api_key: string; allow_manual_switching: boolean };
    t.same(Object.keys(config.modes), ['greeter']);
    t.equal(config.allow_manual_switching, false);
    t.equal(config.api_key, '[REDACTED]', 'secrets are not printed');
  });

  t.test('schema output equals the committed config/schema.json', async (t) => {
    const r = cortexd('schema');
    t.equal(r.code, 0);
    const committed = join(ROOT, 'config', 'schema.json');
    t.ok(existsSync(committed), 'config/schema.json is committed');
    t.equal(r.stdout, readFileSync(committed, 'utf8'), 'regenerate with `npm run build && npm run schema` after changing the schema or plugins');
    t.doesNotThrow(() => JSON.parse(r.stdout));
  });
}
