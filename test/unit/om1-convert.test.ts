// Proves the OM1 translations a user reads: model, voice, vision, robot-body names and options mapped, each reported; legacy files, URIDs, unsupported plugins.
import t from 'tap';
import { convertOm1 } from '../../src/compat/om1/convert.js';

const legacy = (extra: Record<string, unknown>) => ({
  hertz: 1,
  name: 'spot',
  api_key: 'openmind_free',
  system_prompt_base: 'You are a dog.',
  system_governance: 'Be kind.',
  system_prompt_examples: '',
  agent_inputs: [],
  agent_actions: [],
  cortex_llm: { type: 'OpenAILLM', config: {} },
  ...extra,
});

t.test('model plugins become CloudLLM/LocalLLM with provider and model mapped', async (t) => {
  const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
    [
      { type: 'OpenAILLM', config: { model: 'gpt-4.1-mini', agent_name: 'Spot', history_length: 3 } },
      { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4.1-mini', agent_name: 'Spot', history_length: 3 } },
    ],
    [
      { type: 'DeepSeekLLM', config: {} },
      { type: 'CloudLLM', config: { provider: 'provider_b', model: 'deep-chat' } },
    ],
    [
      { type: 'XAILLM', config: {} },
      { type: 'CloudLLM', config: { provider: 'provider_d', model: 'gk-4-latest' } },
    ],
    [
      { type: 'GeminiLLM', config: { timeout: 20 } },
      { type: 'CloudLLM', config: { provider: 'provider_c', model: 'twin-2.5-flash', timeout_seconds: 20 } },
    ],
    [
      { type: 'OpenRouter', config: { model: 'meta-llama/llama-3.3-70b-instruct' } },
      { type: 'CloudLLM', config: { provider: 'provider_f', model: 'orgm/ll-3.3-70b-instruct' } },
    ],
    [
      { type: 'OllamaLLM', config: { model: 'llama3.2', base_url: 'http://localhost:11434', num_ctx: 4096 } },
      { type: 'LocalLLM', config: { base_url: 'http://localhost:11434/v1', model: 'llama3.2' } },
    ],
  ];
  for (const [om1, native] of cases) {
    const c = convertOm1(legacy({ cortex_llm: om1 }));
    t.same(c.missing, []);
    t.same(c.config.cortex_llm, native, String(om1.type));
    t.ok(
      c.translations.some((l) => l.startsWith(`cortex_llm.type: ${om1.type} -> ${native.type}`)),
      c.translations.join('\n'),
    );
  }
  const gemini = convertOm1(legacy({ cortex_llm: { type: 'GeminiLLM', config: {} } }));
  t.match(gemini.translations.join('\n'), /model gemini-2\.0-flash-exp is not offered; the nearest offered model twin-2\.5-flash is used/);
  const ollama = convertOm1(legacy({ cortex_llm: { type: 'OllamaLLM', config: { num_ctx: 4096 } } }));
  t.match(ollama.translations.join('\n'), /num_ctx 4096: not sent/);
});

t.test('voice and vision inputs and their options', async (t) => {
  const c = convertOm1(
    legacy({
      agent_inputs: [
        { type: 'GoogleASRInput', config: { language: 'en-US', enable_tts_interrupt: true } },
        { type: 'VLM_COCO_Local', config: { camera_index: 2, log_file: true } },
        { type: 'VLMOpenAIRTSP', config: { rtsp_url: 'rtsp://cam/front' } },
      ],
    }),
  );
  t.same(c.missing, []);
  const inputs = (c.config.agent_inputs as Array<Record<string, unknown>>).map((i) => [i.type, i.config]);
  t.same(inputs, [
    ['SpeechlabASRInput', { descriptor: 'Voice', language: 'en', allow_interruption: true }],
    ['LocalVLMInput', { descriptor: 'Vision', camera: { binding: 'opencv', device: 2 } }],
    ['VLMInput', { descriptor: 'Vision', camera: { binding: 'opencv', device: 'rtsp://cam/front' } }],
  ]);
  t.ok(
    c.translations.includes(
      'agent_inputs[0].type: GoogleASRInput {"language":"en-US","enable_tts_interrupt":true} -> SpeechlabASRInput (language en-US -> en)',
    ),
    c.translations.join('\n'),
  );
  t.match(c.translations.join('\n'), /log_file true: no detection log file/);
});

t.test('robot families: bodies on their bus, refused natively; the placeholder URID and unitree_ethernet reported', async (t) => {
  const c = convertOm1(
    legacy({
      URID: 'om1_qwertyui',
      unitree_ethernet: 'eth0',
      agent_inputs: [{ type: 'UnitreeGo2Battery' }],
      agent_actions: [{ name: 'move_go2_autonomy', llm_label: 'move', connector: 'unitree_om_path_sdk' }],
    }),
  );
  t.same(c.missing, []);
  t.equal(c.config.URID, undefined);
  t.same((c.config.agent_inputs as unknown[])[0], {
    type: 'BodyInput',
    config: { robot: 'unitree_go2', binding: 'unitree_dds', facets: ['battery'], network_interface: 'eth0' },
  });
  t.same((c.config.agent_actions as unknown[])[0], {
    name: 'move',
    llm_label: 'move',
    connector: 'body',
    config: { robot: 'unitree_go2', binding: 'unitree_dds', network_interface: 'eth0' },
  });
  t.match(c.translations.join('\n'), /URID: "om1_qwertyui" is OM1's placeholder -> no URID/);
});

t.test('a version-less file is the oldest format; missing and unsupported parts are listed one line each', async (t) => {
  const c = convertOm1(
    legacy({
      agent_inputs: [{ type: 'WalletCoinbase', config: { asset_id: 'eth' } }],
      agent_actions: [{ name: 'move_to_peer', llm_label: 'go', connector: 'ros2' }],
      action_execution_mode: 'sequential',
    }),
  );
  t.equal(c.config.version, 'v1.0.0');
  t.same(c.unsupported, ['agent_inputs[0].type: WalletCoinbase {"asset_id":"eth"}: talks only to a Coinbase wallet balance; unsupported']);
  t.same(c.missing, ['agent_actions[0]: move_to_peer/ros2: action move_to_peer with connector ros2 has no counterpart in this runtime']);
  t.equal(c.config.action_execution_mode, 'sequential', 'sequential is carried out by the runtime: kept');
  t.match(c.translations.join('\n'), /action_execution_mode: "sequential" -> the same/);
});

t.test('action_dependencies are kept with the dependencies mode and dropped (with a line) without it, as OM1 ignores them there', async (t) => {
  const deps = { move: ['speak'] };
  const c = convertOm1(legacy({ action_execution_mode: 'dependencies', action_dependencies: deps }));
  t.same(c.config.action_dependencies, deps);
  const d = convertOm1(legacy({ action_execution_mode: 'concurrent', action_dependencies: deps }));
  t.equal(d.config.action_dependencies, undefined);
  t.match(d.translations.join('\n'), /action_dependencies: dropped: OM1 reads them only with action_execution_mode "dependencies"/);
});
