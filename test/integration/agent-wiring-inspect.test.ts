// `cortexd run --inspect ws://...`: a local WebSocket server receives the agent's statechart inspection events, with no secrets and no media in them.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { built, startAgent, typeLines, workDir } from '../helpers/agent-process.js';

const SECRET = `key_live_${'Zq9'.repeat(16)}`;

t.test('--inspect sends inspection events to the given address; typed secrets are redacted and base64 media replaced', { skip: built ? false : 'run npm run build first' }, async (t) => {
  const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const port = (server.address() as AddressInfo).port;
  const received: string[] = [];
  const waiters: Array<[(m: string) => boolean, () => void]> = [];
  server.on('connection', (ws) =>
    ws.on('message', (data) => {
      const text = data.toString();
      received.push(text);
      for (const w of [...waiters]) if (w[0](text)) (waiters.splice(waiters.indexOf(w), 1), w[1]());
    }),
  );
  const seen = (pred: (m: string) => boolean, what: string, ms = 10_000) =>
    new Promise<void>((resolve, reject) => {
      if (received.some(pred)) return resolve();
      const timer = setTimeout(() => reject(new Error(`inspector never received ${what} (${received.length} messages)`)), ms);
      waiters.push([pred, () => (clearTimeout(timer), resolve())]);
    });

  const w = workDir();
  const config = w.file('agent.json5');
  // A local model that is not there: model calls fail fast, which is all this test needs of a tick.
  writeFileSync(
    config,
    `{
      version: "v1.0.5", name: "inspected", default_mode: "idle", allow_manual_switching: true, mode_memory_enabled: false,
      api_key: "${SECRET}", system_governance: "obey", service: { base_url: "http://127.0.0.1:9" },
      cortex_llm: { type: "LocalLLM", config: { base_url: "http://127.0.0.1:9/v1", retry: false, timeout_seconds: 2 } },
      modes: {
        idle: { display_name: "Idle", description: "d", system_prompt_base: "rest", hertz: 5,
          agent_inputs: [{ type: "TextInput", config: { source: "socket", path: "${w.socket}", descriptor: "Voice" } }],
          agent_actions: [{ name: "speak", llm_label: "speak", connector: "console" }] },
      },
    }`,
  );
  const agent = startAgent(config, w.state, ['--inspect', `ws://127.0.0.1:${port}`, '--for', '30s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));

  await seen((m) => m.includes('"modes"'), 'the mode machine');
  await agent.waitFor((e) => e.type === 'tick', 10_000, 'first tick');

  const media = randomBytes(600).toString('base64');
  await typeLines(w.socket, [media]);
  await agent.waitFor((e) => e.type === 'prompt', 10_000, 'prompt of the media line');
  await seen((m) => m.includes('[base64 800 chars]'), 'the typed base64 line, replaced');

  await typeLines(w.socket, [`my key is ${SECRET} keep it`]);
  await agent.waitFor((e) => e.type === 'prompt' && e.prompt.includes('my key is'), 10_000, 'prompt of the secret line');
  await seen((m) => m.includes('my key is key_live_[REDACTED] keep it'), 'the typed secret line, redacted');

  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);
  const all = received.join('\n');
  t.ok(received.length > 5, `${received.length} inspection messages`);
  t.notOk(all.includes(SECRET.slice(9)), 'the key never reaches the inspector');
  t.notOk(all.includes(media.slice(0, 64)), 'the base64 never reaches the inspector');
});
