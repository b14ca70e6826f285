// Proves the built CLI loads what a command uses: --version, check, schema, modes and graph load no server stack, native addon or plugin code.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { projectRoot } from '../../src/paths.js';

const ROOT = projectRoot();
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const TRACER = join(ROOT, 'test', 'fixtures', 'load-trace', 'tracer.mjs');

/** Packages no read-only command may load (servers, sockets, native addons, the statechart and media runtimes). */
const HEAVY = [
  'fastify',
  'ws',
  '@modelcontextprotocol/sdk',
  'better-sqlite3',
  'better-sqlite3-node20',
  'serialport',
  '@serialport/stream',
  '@u4/opencv4nodejs',
  'elkjs',
  'pino-pretty',
  'pino',
  'xstate',
  'rxjs',
  'node-record-lpcm16',
  '@statelyai/inspect',
  'prom-client',
  'mqtt',
];

interface Trace {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Package names of every module loaded, e.g. `zod`, `@u4/opencv4nodejs`. */
  packages: Set<string>;
  /** Project files loaded, relative to the project (`dist/cli/main.js`). */
  files: string[];
}

/** Runs the built CLI with the module tracer preloaded; returns what it printed and every module it loaded. */
function traced(args: string[], env: NodeJS.ProcessEnv = {}, entry: string[] = [MAIN]): Trace {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-load-'));
  const out = join(dir, 'trace.txt');
  try {
    const run: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_OPTIONS: '',
      CORTEX_LOAD_TRACE: out,
      CORTEX_STATE_DIR: join(dir, 'state'),
      CORTEX_ENV_FILE: join(dir, 'none.env'),
      ...env,
    };
    for (const k of [
      'CONFIG',
      'OM_API_KEY',
      'CORTEX_CONFIG_DIR',
      'CORTEX_BASE_URL',
      'CORTEX_WS_BASE_URL',
      'CORTEX_ASR_WS_URL',
      'CORTEX_VLM_WS_URL',
      'CORTEX_METRICS_PORT',
    ])
      delete run[k];
    const r = spawnSync(process.execPath, [`--import=${TRACER}`, ...entry, ...args], { cwd: ROOT, env: run, encoding: 'utf8', timeout: 60_000 });
    const lines = existsSync(out) ? readFileSync(out, 'utf8').split('\n').filter(Boolean) : [];
    const paths = lines.map((l) => {
      const where = l.slice(4);
      return where.startsWith('file:') ? fileURLToPath(where) : where;
    });
    const packages = new Set<string>();
    for (const p of paths) {
      const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(p.slice(p.lastIndexOf('node_modules/')));
      if (m) packages.add(m[1]!);
    }
    const files = [...new Set(paths.filter((p) => p.startsWith(ROOT) && !p.includes('node_modules')).map((p) => p.slice(ROOT.length + 1)))].sort();
    return { code: r.status, stdout: r.stdout, stderr: r.stderr, packages, files };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const heavyIn = (trace: Trace) => HEAVY.filter((p) => trace.packages.has(p));
const pluginCode = (trace: Trace) =>
  trace.files.filter((f) => /^dist\/(actors|devices)\//.test(f) || /^dist\/src\/(service|websim\/server|cortex\/llm|vision)\b/.test(f));

requireBuild();
{
  t.test('the tracer sees ESM and CommonJS packages: elkjs is loaded when an SVG is drawn without Graphviz', async (t) => {
    const svg = traced(['graph', 'default', '--format', 'svg'], { CORTEX_DOT: join(ROOT, 'no-such-dot') });
    t.equal(svg.code, 0, svg.stderr);
    t.match(svg.stdout, /<svg/);
    t.ok(svg.packages.has('elkjs'), 'elkjs (CommonJS) was seen');
    t.ok(svg.packages.has('zod'), 'zod (ESM) was seen');
    t.ok(svg.files.includes('dist/cli/main.js'), 'project files were seen');
  });

  t.test('--version prints the version of package.json and loads no dependency, only the entry and paths', async (t) => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string; dependencies: Record<string, string> };
    for (const flag of ['--version', '-V']) {
      const r = traced([flag]);
      t.equal(r.code, 0, r.stderr);
      t.equal(r.stdout.trim(), pkg.version, flag);
      t.same(
        Object.keys(pkg.dependencies).filter((p) => r.packages.has(p)),
        [],
        `${flag} loads no dependency`,
      );
      t.same(r.files, ['dist/cli/main.js', 'dist/cli/version.js', 'dist/src/paths.js'], `${flag} loads the entry and the version reader only`);
    }
    // With other arguments the program (commander) answers, as before.
    const r = traced(['--version', 'check']);
    t.equal(r.stdout.trim(), pkg.version);
    t.ok(r.packages.has('commander'), 'commander parsed --version among other arguments');
  });

  for (const args of [
    ['check', 'default'],
    ['check', '--all'],
    ['schema'],
    ['modes', 'default'],
    ['graph', 'default'],
    ['graph', 'default', '--format', 'dot'],
  ]) {
    t.test(`cortexd ${args.join(' ')} loads no server stack and no plugin code`, async (t) => {
      const r = traced(args);
      t.equal(r.code, 0, r.stderr);
      t.same(heavyIn(r), [], `none of ${HEAVY.join(', ')}`);
      t.same(pluginCode(r), [], 'no file of actors/, devices/, the service, WebSim server, model plugins or vision');
    });
  }

  t.test('the agent and the local service load no MCP client and no JWT library until a mode uses MCP or a token is handled', async (t) => {
    const modules = ['dist/actors/agent/agent.js', 'dist/src/service/index.js'].map((f) => JSON.stringify(pathToFileURL(join(ROOT, f)).href));
    const r = traced([], {}, ['--input-type=module', '-e', modules.map((m) => `await import(${m});`).join('')]);
    t.equal(r.code, 0, r.stderr);
    t.ok(r.files.includes('dist/actors/agent/agent.js') && r.files.includes('dist/src/service/index.js'), 'both were loaded');
    t.ok(r.files.includes('dist/src/cortex/mcp.js'), 'the MCP module itself is part of the agent');
    t.same(
      ['@modelcontextprotocol/sdk', 'jose', 'zod-to-json-schema', 'ajv'].filter((p) => r.packages.has(p)),
      [],
      'the MCP SDK (with ajv, zod-to-json-schema) and jose are loaded on first use',
    );
  });

  t.test('a run without --inspect, CORTEX_METRICS_PORT and with JSON log lines loads neither the inspector, prom-client nor pino-pretty', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cortexd-load-run-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const config = join(dir, 'lean.json5');
    writeFileSync(
      config,
      `{ version: "v1.0.5", name: "lean", default_mode: "m", api_key: "", allow_manual_switching: false, mode_memory_enabled: false, system_governance: "obey", service: { base_url: "embedded" },
        cortex_llm: { type: "CloudLLM", config: { provider: "provider_a", model: "gen-4o-mini" } },
        modes: { m: { display_name: "M", description: "d", system_prompt_base: "rest", hertz: 10, agent_inputs: [],
          agent_actions: [{ name: "face", llm_label: "emotion", connector: "console" }] } } }`,
    );
    // From the ES modules: the run bundle holds these packages inside one file, so only this path shows what is loaded.
    const r = traced(['run', '--config', config, '--events', '--for', '300ms'], { CORTEX_CLI_BUNDLE: '0' });
    t.equal(r.code, 0, r.stderr);
    t.match(r.stdout, /"type":"tick"/, 'the agent ran');
    t.same(
      ['@statelyai/inspect', 'pino-pretty', 'prom-client', '@opentelemetry/api'].filter((p) => r.packages.has(p)),
      [],
      'each is loaded only when used (--inspect, a terminal, the metrics endpoint)',
    );
  });
}
