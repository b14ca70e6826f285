// Proves the built CLI on OM1's v1.1 files: --om1/--simulate in any order with a path anywhere, use_sim from the file, and `om1 convert` output that checks and runs like --om1.
import { requireBuild } from '../helpers/requires.js';
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { tempDir } from '../helpers/config-fixtures.js';
import { runOm1 } from '../support/om1-runs.js';

// A hang guard for runs on a loaded 2-core machine, not a timing assertion.
t.setTimeout(300_000);
requireBuild();
const ROOT = projectRoot();
const MAIN = join(ROOT, 'dist', 'cli', 'main.js');
const V11 = join(ROOT, 'test', 'fixtures', 'om1', 'v1.1', 'conversation.json5');
const dir = tempDir(t, 'om1-v11-');

const cortexd = (args: string[], env: Record<string, string> = {}, cwd = dir) => {
  const e: NodeJS.ProcessEnv = { ...process.env, CORTEX_CONFIG_DIR: join(dir, 'config'), CORTEX_ENV_FILE: join(dir, 'none.env'), NO_COLOR: '1', ...env };
  for (const k of ['OM_API_KEY', 'CONFIG', 'USE_SIM', 'CORTEX_BASE_URL', 'CORTEX_WS_BASE_URL', 'CORTEX_ASR_WS_URL', 'CORTEX_VLM_WS_URL'])
    if (!(k in env)) delete e[k];
  const r = spawnSync(process.execPath, [MAIN, ...args], { cwd, env: e, encoding: 'utf8', timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
};

/** A v1.1 file as OM1's Go runtime reads it: a bare placeholder, a key twice, agent_backgrounds, a mode timeout. */
const file = join(dir, 'robot.json5');
writeFileSync(
  file,
  `{
  version: "v1.1.0",
  "name": "robot",
  default_mode: "talk",
  use_sim: \${USE_SIM:-false},
  use_tracer: false,
  use_tracer: { enabled: false },
  api_key: "\${OM_API_KEY:-openmind_free}",
  system_governance: "",
  cortex_llm: { type: "OpenAILLM", config: { agent_name: "Bits", history_length: 2 } },
  global_backgrounds: [{ type: "ApproachingPerson" }],
  modes: {
    talk: {
      system_prompt_base: "You are Bits, a robot dog. Answer what you hear.",
      hertz: 1,
      timeout_seconds: 0,
      action_execution_mode: "sequential",
      agent_inputs: [{ type: "GoogleASRInput" }, { type: "ConversationHistoryInput", config: { max_rounds: 3 } }],
      agent_actions: [
        { name: "speak", llm_label: "speak", connector: "elevenlabs_tts" },
        { name: "emotion", llm_label: "emotion", connector: "zenoh" },
      ],
    },
  },
}
`,
);

t.test('--om1 and --simulate in any order, the file anywhere a name goes', async (t) => {
  const orders = [
    ['check', '--om1', '--simulate', file],
    ['check', '--simulate', '--om1', file],
    ['check', file, '--om1', '--simulate'],
    ['check', '--om1', file, '--simulate'],
    ['check', '--om1', '--simulate', 'robot.json5'],
  ];
  const outputs = orders.map((args) => cortexd(args));
  for (const [i, r] of outputs.entries()) {
    t.equal(r.code, 0, `${orders[i]!.join(' ')}: ${r.stderr}`);
    t.match(r.stdout, /^ok: .*robot\.json5 \(1 mode\)$/m);
  }
  t.equal(new Set(outputs.map((r) => r.stdout)).size, 1, 'the same answer in every order');
  const out = outputs[0]!.stdout;
  t.match(out, /om1: line 5: \$\{USE_SIM:-false\} -> false \(a placeholder outside quotes: expanded before parsing/);
  t.match(out, /om1: use_tracer: given more than once; the last one is used/);
  t.match(out, /om1: global_backgrounds\[0\]\.type: ApproachingPerson \(background\) -> PresenceInput/);
  t.match(out, /om1: modes\.talk\.agent_actions\[1\]: emotion\/zenoh -> face\/websim \(OM1's emotion topic over Zenoh -> WebSim's face panel \(--simulate\)\)/);
});

t.test('without --simulate the file says what a real robot lacks; USE_SIM=true makes it a simulation', async (t) => {
  const real = cortexd(['check', '--om1', file]);
  t.equal(real.code, 2);
  t.match(real.stdout, /modes\.talk\.agent_actions\[1\]: emotion\/zenoh: OM1's avatar\/emotion topic over Zenoh: no Zenoh client/);
  const sim = cortexd(['check', '--om1', file], { USE_SIM: 'true' });
  t.equal(sim.code, 0, sim.stderr);
  t.match(sim.stdout, /om1: use_sim: true -> run as --simulate/);
  t.match(sim.stdout, /^simulate: /m, 'the devices were simulated');
});

t.test('another major version is refused as OM1 refuses it', async (t) => {
  const v2 = join(dir, 'v2.json5');
  writeFileSync(v2, '{ version: "v2.0.0", name: "x", agent_inputs: [], agent_actions: [] }');
  const r = cortexd(['check', '--om1', v2]);
  t.equal(r.code, 2);
  t.match(r.stdout, /refused: version: "v2\.0\.0" is incompatible with OM1's runtime v1\.1\.0: major version mismatch/);
  t.notMatch(r.stderr, /\n\s+at /, 'no stack trace');
});

t.test('om1 convert writes a native file that checks and runs the same as --om1', async (t) => {
  const native = join(dir, 'native.json5');
  const conv = cortexd(['om1', 'convert', file, '--simulate', '-o', native]);
  t.equal(conv.code, 0, conv.stderr);
  const check = cortexd(['check', '--config', native]);
  t.equal(check.code, 0, check.stderr);
  t.match(check.stdout, /^ok: .*native\.json5 \(1 mode\)$/m);
  // Both runs: simulated, the embedded service's model answers, actions taken.
  const [om1, conv2] = await Promise.all([runOm1(MAIN, file, 40, 2), runOm1(MAIN, native, 40, 2, undefined, false)]);
  for (const [what, r] of [
    ['--om1', om1],
    ['converted', conv2],
  ] as const) {
    t.equal(r.code, 0, `${what} exits cleanly: ${r.stderrTail}`);
    t.ok((r.counts['model.answer'] ?? 0) >= 2, `${what}: the model answered`);
    t.ok((r.counts.action ?? 0) > 0, `${what}: actions ran`);
  }
  t.same(Object.keys(om1.counts).sort(), Object.keys(conv2.counts).sort(), 'the same kinds of events');
});

t.test("OM1's v1.1 conversation file (as published) passes check --om1 --simulate", async (t) => {
  const r = cortexd(['check', '--om1', '--simulate', V11]);
  // Its knowledge_base is OM1's folder knowledge_base/om beside config/ (not in this checkout): a warning, and it passes.
  t.equal(r.code, 0, r.stdout + r.stderr);
  t.match(r.stdout + r.stderr, /knowledge_base: \S+\/knowledge_base\/om does not exist: the robot answers without its knowledge base until it does/);
  t.match(r.stdout, /knowledge_base\.base_url: .*OM1's embedding server is not called/);
  t.match(r.stdout, /om1: use_tracer: given more than once; the last one is used/);
  t.match(r.stdout, /om1: use_tracer: \{"enabled":true,"quality_scorer":\{"enabled":true\}\} -> the run is recorded/);
});

t.test('run: use_sim: true simulates without --simulate (said first) and use_tracer records the run', async (t) => {
  const traced = join(dir, 'traced.json5');
  writeFileSync(
    traced,
    `{ version: "v1.1.0", name: "traced", use_sim: true, use_tracer: { enabled: true }, api_key: "openmind_free", system_governance: "",
       system_prompt_base: "You are a robot dog.", cortex_llm: { type: "OpenAILLM", config: {} },
       agent_inputs: [{ type: "GoogleASRInput" }], agent_actions: [{ name: "speak", llm_label: "speak", connector: "elevenlabs_tts" }] }`,
  );
  const state = join(dir, 'state');
  const r = spawnSync(process.execPath, [MAIN, 'run', '--om1', traced, '--for', '4s', '--events', '--fresh'], {
    cwd: dir,
    env: { ...process.env, CORTEX_STATE_DIR: state, CORTEX_LOG_LEVEL: 'warn', NOTIFY_SOCKET: '', CORTEX_METRICS_PORT: '', OM_API_KEY: '' },
    encoding: 'utf8',
    timeout: 120_000,
  });
  t.equal(r.status, 0, r.stderr.slice(-1500));
  t.match(r.stderr.split('\n')[0], /^cortexd: SIMULATION \(the OM1 file's use_sim: true\)/, 'said in the first line');
  const recording = /cortexd: use_tracer: recording this run to (\S+\.mcap)/.exec(r.stderr)?.[1];
  t.ok(recording?.startsWith(join(state, 'traces')), `recorded under the state directory's traces/ (${recording})`);
  const { statSync } = await import('node:fs');
  t.ok(recording && statSync(recording).size > 0, 'the recording has content');
});
