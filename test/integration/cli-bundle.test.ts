// Proves `cortexd check` from its one-file build: it is what runs (no module of a package is loaded), and it prints and exits exactly as the ES modules do.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { runInThisContext } from 'node:vm';
import { projectRoot } from '../../src/paths.js';
import { descriptors } from '../../src/plugins/index.js';
import { legacyConfig, mode, tempDir, validConfig, writeConfig } from '../helpers/config-fixtures.js';

const ROOT = projectRoot();
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const BUNDLE = join(ROOT, 'dist', 'cli', 'check.bundle.cjs');
const TRACER = join(ROOT, 'test', 'fixtures', 'load-trace', 'tracer.mjs');

requireBuild();
{
  const configDir = tempDir(t, 'cortexd-bundle-');
  const llm = descriptors.llms.names()[0]!;
  const valid = (extra: Record<string, unknown> = {}) => validConfig({ cortex_llm: { type: llm }, service: { base_url: 'embedded' }, ...extra });
  writeConfig(configDir, 'good', valid());
  writeConfig(configDir, 'bad', valid({ modes: { guard: mode({ hertz: 'fast' }), rest: mode() }, default_mode: 'nowhere', colour: 'red' }));
  writeConfig(configDir, 'warned', valid({ version: 'v1.2.0' }));
  writeConfig(configDir, 'legacy_bot', legacyConfig({ cortex_llm: { type: llm }, agent_inputs: [], agent_actions: [], service: { base_url: 'embedded' } }));
  writeConfig(configDir, 'broken', '{ name: "x", modes: {');
  writeConfig(configDir, 'unknown_plugin', valid({ cortex_llm: { type: `${llm}x` } }));

  /** Runs the built CLI, from the bundle or (`esm`) from the ES modules. */
  const cortexd = (args: string[], esm: boolean, preload: string[] = []) => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_OPTIONS: '',
      CORTEX_CONFIG_DIR: configDir,
      CORTEX_ENV_FILE: join(configDir, 'none.env'),
      NO_COLOR: '1',
    };
    for (const k of [
      'OM_API_KEY',
      'URID',
      'CONFIG',
      'CORTEX_DEBUG',
      'CORTEX_BASE_URL',
      'CORTEX_WS_BASE_URL',
      'CORTEX_ASR_WS_URL',
      'CORTEX_VLM_WS_URL',
      'CORTEX_CLI_BUNDLE',
    ])
      delete env[k];
    if (esm) env.CORTEX_CLI_BUNDLE = '0';
    return spawnSync(process.execPath, [...preload, MAIN, ...args], { cwd: ROOT, env, encoding: 'utf8', timeout: 60_000 });
  };

  t.test('the build made the bundle and its code cache; it holds check, not the server stack or plugin code', async (t) => {
    t.ok(existsSync(BUNDLE), 'npm run build wrote dist/cli/check.bundle.cjs');
    t.ok(existsSync(`${BUNDLE}.cache`), 'and its code cache');
    const { files } = (runInThisContext(readFileSync(BUNDLE, 'utf8')) as (...a: unknown[]) => { files: Record<string, unknown> })(
      ROOT,
      undefined,
      createRequire(BUNDLE),
    );
    const ids = Object.keys(files);
    t.ok(ids.includes('dist/cli/check.js') && ids.includes('dist/src/config/load.js'), 'check and the config loader');
    const packages = ids.filter((f) => f.includes('node_modules/')).map((f) => /node_modules\/((?:@[^/]+\/)?[^/]+)\/package\.json$/.exec(f)?.[1]);
    t.same(packages.sort(), ['@humanwhocodes/momoa', 'commander', 'dotenv', 'json5', 'zod'], 'the packages check uses, each listed by its package.json');
    t.same(
      ids.filter((f) => /^dist\/(actors|devices)\//.test(f) || /^dist\/src\/(service|websim|cortex|vision|record|fleet)\//.test(f)),
      [],
      'no agent, service, WebSim, model, recorder or fleet code',
    );
  });

  t.test('check runs from the bundle: no ES module beyond the entry, no package module is loaded', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cortexd-bundle-trace-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const trace = join(dir, 'trace.txt');
    process.env.CORTEX_LOAD_TRACE = trace;
    t.teardown(() => delete process.env.CORTEX_LOAD_TRACE);
    const r = cortexd(['check', 'good'], false, [`--import=${TRACER}`]);
    t.equal(r.status, 0, r.stderr);
    const loaded = readFileSync(trace, 'utf8').split('\n');
    t.same(
      loaded.filter((l) => /node_modules\/(zod|commander|json5|dotenv|@humanwhocodes\/momoa)\//.test(l)),
      [],
      'zod, commander, json5, dotenv and momoa come from the bundle',
    );
    t.same(
      loaded
        // tap's process tracker injects itself into every child it sees spawned (process-on-spawn): not ours.
        .filter(
          (l) => l.includes(ROOT) && !l.includes('/test/fixtures/') && !/node_modules\/(@tapjs|fromentries|pirates|process-on-spawn|signal-exit)\//.test(l),
        )
        .map((l) => l.slice(l.indexOf('/dist/') + 1))
        .sort(),
      ['dist/cli/bundle.js', 'dist/cli/main.js', 'dist/cli/version.js', 'dist/src/paths.js'],
      'the entry and the loader only',
    );
  });

  // --all covers the legacy file and the one with a warning.
  for (const args of [
    ['check', 'good'],
    ['check', 'bad'],
    ['check', 'broken'],
    ['check', 'unknown_plugin'],
    ['check', '--all'],
    ['check', '--simulate', 'good'],
    ['check', 'does_not_exist'],
    ['check', '--bogus'],
    ['check', '--help'],
  ]) {
    t.test(`cortexd ${args.join(' ')}: the same output and exit code as from the ES modules`, async (t) => {
      const bundled = cortexd(args, false);
      const esm = cortexd(args, true);
      t.equal(bundled.status, esm.status, 'exit code');
      t.equal(bundled.stdout, esm.stdout, 'stdout');
      t.equal(bundled.stderr, esm.stderr, 'stderr');
      t.notMatch(bundled.stdout + bundled.stderr, /\n\s+at /, 'no stack trace');
    });
  }
}
