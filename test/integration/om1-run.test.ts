// Proves OM1 files run unchanged with `cortexd run --om1 FILE --simulate`: a simulation banner first, model calls and actions, a clean exit; and `om1 convert` writes a file that checks.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { projectRoot } from '../../src/paths.js';
import { runMany, runOm1 } from '../support/om1-runs.js';

// A hang guard for the whole file on a loaded 2-core CI machine (tap's default is 120 s), not a timing assertion.
t.setTimeout(300_000);

const MAIN = join(projectRoot(), 'dist', 'cli', 'main.js');
const CORPUS = resolve(projectRoot(), '..', 'shared', 'reference', 'om1-configs');
if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run npm run build first`);

/** One of each family: a hosted model with WebSim, a robot body over each bus (simulated), a local model, serial input. */
const FILES = ['open_ai.json5', 'turtlebot4.json5', 'ubtech_yanshee.json5', 'conversation_local.json5'];

t.test('OM1 files run in simulation with model calls, several at once', async (t) => {
  // Each run stops itself (SIGTERM) after the model's first answer; 90 s is only the hang guard.
  const runs = await runMany(
    MAIN,
    FILES.map((f) => join(CORPUS, f)),
    90,
    4,
    1,
  );
  for (const r of runs) {
    const name = r.file.split('/').pop();
    t.equal(r.code, 0, `${name} exits 0; ${r.stderrTail}`);
    t.match(r.head[0], /^cortexd: SIMULATION \(--simulate\)/, `${name}: the first line says it is a simulation`);
    t.match(r.head[1], /^cortexd: read as an OM1 file: \d+ translations?/, `${name}: then that it was translated`);
    t.ok((r.counts['model.answer'] ?? 0) > 0, `${name}: the model answered (${r.counts['model.answer'] ?? 0})`);
  }
  t.ok(
    runs.some((r) => (r.counts.action ?? 0) > 0),
    `actions ran: ${runs.map((r) => `${r.file.split('/').pop()} ${r.counts.action ?? 0}`).join(', ')}`,
  );
});

t.test('check --om1 takes a TurtleBot 4 over ros2_zenoh as the ros2 binding over DDS, with a note; --simulate passes', async (t) => {
  const file = join(CORPUS, 'turtlebot4.json5');
  const real = spawnSync(process.execPath, [MAIN, 'check', '--om1', file], { encoding: 'utf8' });
  t.equal(real.status, 0, real.stdout + real.stderr);
  t.match(real.stdout, /turtlebot4 over ros2_zenoh -> ros2 \(DDS carries the same ROS 2 topics; no Zenoh bridge is needed\)/);
  t.match(real.stdout, /^om1: agent_inputs\[3\]\.type: GoogleASRInput -> SpeechlabASRInput \(language english -> en\)$/m);
  const sim = spawnSync(process.execPath, [MAIN, 'check', '--om1', file, '--simulate'], { encoding: 'utf8' });
  t.equal(sim.status, 0, sim.stdout + sim.stderr);
  t.match(sim.stdout, /^ok: .*turtlebot4\.json5 \(1 mode, converted from single-mode\)$/m);
});

t.test('a file with unsupported web-service plugins is refused with one line each', async (t) => {
  const r = spawnSync(process.execPath, [MAIN, 'check', '--om1', join(CORPUS, 'twitter.json5')], { encoding: 'utf8' });
  t.equal(r.status, 2);
  t.match(r.stdout, /unsupported \(third-party web service\): agent_inputs\[0\]\.type: TwitterInput .*X\/Twitter's search API; unsupported/);
  t.match(r.stdout, /unsupported \(third-party web service\): agent_actions\[0\]: tweet\/twitterAPI: talks only to X\/Twitter's posting API; unsupported/);
});

t.test('a legacy single-mode OM1 file without version converts, checks and runs', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'om1-legacy-'));
  const legacy = join(dir, 'old_spot.json5');
  writeFileSync(
    legacy,
    `{ hertz: 0.5, name: "old_spot", api_key: "openmind_free", URID: "default",
       system_prompt_base: "You are Spot, a dog.", system_governance: "Be kind.", system_prompt_examples: "",
       agent_inputs: [{ type: "GoogleASRInput", config: { language: "german" } }],
       cortex_llm: { type: "OpenAILLM", config: { agent_name: "Spot", history_length: 2 } },
       agent_actions: [{ name: "speak", llm_label: "speak", implementation: "passthrough", connector: "elevenlabs_tts", config: { voice_id: "abc" } },
                       { name: "move", llm_label: "move", implementation: "passthrough", connector: "ros2" }] }`,
  );
  const out = join(dir, 'native.json5');
  const conv = spawnSync(process.execPath, [MAIN, 'om1', 'convert', legacy, '-o', out], { encoding: 'utf8' });
  t.equal(conv.status, 0, conv.stdout + conv.stderr);
  t.match(conv.stdout, /^om1: version: none \(OM1's oldest single-mode format\) -> v1\.0\.0$/m);
  t.match(conv.stdout, /^om1: agent_inputs\[0\]\.type: GoogleASRInput \{"language":"german"\} -> SpeechlabASRInput \(language german -> de\)$/m);
  t.match(conv.stdout, /^om1: URID: "default" is OM1's placeholder -> no URID/m);
  const check = spawnSync(process.execPath, [MAIN, 'check', '--config', out], { encoding: 'utf8' });
  t.equal(check.status, 0, check.stdout + check.stderr);
  t.match(check.stdout, /converted from single-mode/);
  const [run] = await runMany(MAIN, [legacy], 90, 1, 1);
  t.equal(run!.code, 0, run!.stderrTail);
  t.ok((run!.counts['model.answer'] ?? 0) > 0, 'the model answered');
});

t.test("OM1's greeting rule fires on greeting_conversation_finished, published by the conversation action", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'om1-greeting-'));
  const file = join(dir, 'greeting_bye.json5');
  const mode = (extra: Record<string, unknown>) => ({
    display_name: 'x',
    description: 'x',
    system_prompt_base: 'You are Bits.',
    hertz: 0.001,
    agent_inputs: [],
    action_execution_mode: 'concurrent',
    agent_actions: [],
    backgrounds: [],
    ...extra,
  });
  writeFileSync(
    file,
    JSON.stringify({
      version: 'v1.0.5',
      default_mode: 'greeting',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: 'openmind_free',
      system_governance: 'Be kind.',
      cortex_llm: { type: 'OpenAILLM', config: { agent_name: 'Bits', history_length: 0 } },
      modes: {
        approaching: mode({}),
        greeting: mode({
          agent_actions: [{ name: 'greeting_conversation', llm_label: 'greeting_conversation', connector: 'greeting_conversation_elevenlabs' }],
          lifecycle_hooks: [
            {
              hook_type: 'on_entry',
              handler_type: 'action',
              handler_config: { action: 'greeting_conversation', value: { response: 'Goodbye!', conversation_state: 'finished' } },
              timeout_seconds: 30,
            },
          ],
        }),
      },
      transition_rules: [
        {
          from_mode: 'greeting',
          to_mode: 'approaching',
          transition_type: 'context_aware',
          context_conditions: { greeting_conversation_finished: true },
          priority: 0,
        },
      ],
    }),
  );
  const run = await runOm1(MAIN, file, 90, undefined, (e) => e.type === 'mode.changed');
  t.equal(run.code, 0, run.stderrTail);
  t.equal(run.counts['mode.changed'], 1, 'greeting -> approaching once the conversation said it was finished');
});
