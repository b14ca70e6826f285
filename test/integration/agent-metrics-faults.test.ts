// A real agent against the faulty peer (sockets cut every 1.5 s): its /metrics show reconnects, socket states, drops and CU per service, consistent with what the peer counted.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { startService } from '../../src/service/index.js';
import { createLogger } from '../../src/log.js';
import { startFaultProxy } from '../support/fault-proxy.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { freePort } from '../helpers/default-agent.js';
import { counterPcmFile } from '../helpers/stream-rig.js';

t.setTimeout(180_000);

function scrape(port: number): Promise<string> {
  return new Promise((resolve, reject) =>
    get(`http://127.0.0.1:${port}/metrics`, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve(body));
    }).on('error', reject),
  );
}

/** The value of one sample line `name{labels} value` (labels given as a substring), or undefined. */
function sample(text: string, name: string, labels = ''): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labels && !line.includes(labels)) continue;
    return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return undefined;
}

type StreamEv = Extract<AgentEvent, { type: 'stream' }>;

t.test('metrics of a real agent whose sockets are cut every 1.5 s', async (t) => {
  const svc = await startService({ port: 0, dbPath: ':memory:', logger: createLogger({ level: 'silent' }), jwtSecret: 'm'.repeat(32) });
  t.teardown(() => svc.close());
  const { apiKey } = svc.admin.createApiKey('robot');
  const proxy = await startFaultProxy({ target: svc.url, script: { cutAfterMs: 1500, sockets: ['speechlab', 'vlm'] } });
  t.teardown(() => proxy.close());

  const w = workDir();
  const config = w.file('faulty.json5');
  writeFileSync(
    config,
    JSON.stringify({
      version: 'v1.0.5',
      name: 'faulty',
      default_mode: 'listen',
      allow_manual_switching: false,
      mode_memory_enabled: false,
      api_key: apiKey,
      system_governance: 'obey',
      service: { base_url: proxy.url, ws_base_url: proxy.wsUrl, asr_ws_url: `${proxy.wsUrl}/asr`, vlm_ws_url: `${proxy.wsUrl}/vlm` },
      cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0 } },
      modes: {
        listen: {
          display_name: 'Listen',
          description: 'hears and sees through a flaky network',
          system_prompt_base: 'You are a robot. Answer briefly.',
          hertz: 2,
          agent_inputs: [
            { type: 'SpeechlabASRInput', config: { microphone: { binding: 'replay', file: counterPcmFile(), loop: true } } },
            { type: 'VLMInput', config: { fps: 2, camera: { binding: 'synthetic', width: 320, height: 240, fps: 5 } } },
            { type: 'TextInput', config: { source: 'socket', path: w.socket, descriptor: 'Voice (typed)' } },
          ],
          agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'console' }],
        },
      },
    }),
  );
  const port = await freePort();
  const agent = startAgent(config, w.state, ['--for', '60s'], { CORTEX_METRICS_PORT: String(port) });
  t.teardown(() => void agent.child.kill('SIGKILL'));

  await agent.waitFor((e) => e.type === 'tick', 20_000, 'the first tick');
  await typeLines(w.socket, ['hello robot']);
  await agent.waitFor((e) => e.type === 'model.answer', 20_000, 'a model answer (chat CU)');
  const reconnects = (kind: 'asr' | 'vlm') =>
    agent.events.filter((e): e is StreamEv => e.type === 'stream' && e.kind === kind && e.state === 'streaming').length - 1;
  await agent.waitFor(() => reconnects('asr') >= 3 && reconnects('vlm') >= 3, 40_000, 'three reconnects of each socket');

  const text = await scrape(port);
  const asrReconnects = sample(text, 'cortexd_socket_reconnects_total', 'socket="asr/SpeechlabASRInput"');
  const vlmReconnects = sample(text, 'cortexd_socket_reconnects_total', 'socket="vlm/VLMInput"');
  const opened = proxy.stats().sockets;
  t.ok(asrReconnects !== undefined && asrReconnects >= 3, `ASR reconnects counted: ${asrReconnects}`);
  t.ok(vlmReconnects !== undefined && vlmReconnects >= 3, `VLM reconnects counted: ${vlmReconnects}`);
  // Every socket the peer accepted after the first is a reconnect; one may be opening while we scrape.
  t.ok(Math.abs(opened.speechlab.opened - 1 - asrReconnects!) <= 1, `ASR: ${opened.speechlab.opened} sockets at the peer, ${asrReconnects} reconnects`);
  t.ok(Math.abs(opened.vlm.opened - 1 - vlmReconnects!) <= 1, `VLM: ${opened.vlm.opened} sockets at the peer, ${vlmReconnects} reconnects`);
  t.ok(/cortexd_socket_state\{socket="asr\/SpeechlabASRInput",state="(streaming|connecting)"\} 1/.test(text), 'the ASR socket state is one-hot');
  t.not(
    sample(text, 'cortexd_audio_dropped_bytes_total', 'input="SpeechlabASRInput"'),
    undefined,
    'dropped audio is counted (the ring holds a cut: 0 or more)',
  );
  t.not(sample(text, 'cortexd_frames_dropped_total', 'input="VLMInput"'), undefined, 'dropped frames are counted');
  const sent = agent.events.filter((e): e is StreamEv => e.type === 'stream' && e.kind === 'vlm' && typeof e.frames_sent === 'number').at(-1)?.frames_sent ?? 0;
  t.ok(
    proxy.stats().frames > 0 && sent > 0,
    `frames reached the peer (${proxy.stats().frames}) and the agent counted those it sent (${sent} at its last report)`,
  );
  t.ok((sample(text, 'cortexd_cu_spent_total', 'service="chat"') ?? 0) > 0, 'chat CU counted');
  t.ok((sample(text, 'cortexd_cu_spent_total', 'service="asr"') ?? 0) > 0, 'ASR CU counted');
  t.equal(agent.child.exitCode, null, 'the agent runs on');

  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
});
