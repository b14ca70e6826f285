// `cortexd run --inspect ws://...`: the inspector sees the whole tree under one root, each mode's actors stopped when it is left, and no secret or media.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { WebSocketServer } from 'ws';
import { startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { defaultAgentDir } from '../helpers/default-agent.js';
import { inspectServer, type InspectMsg } from '../helpers/inspect-server.js';

const SECRET = `key_live_${'Zq9'.repeat(16)}`;

t.test('--inspect sends inspection events to the given address; typed secrets are redacted and base64 media replaced', async (t) => {
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
      for (const w of [...waiters]) if (w[0](text)) waiters.splice(waiters.indexOf(w), 1), w[1]();
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

t.test('one tree: every input, action, stream and loop of each visited mode is an actor of the agent, and is stopped when its mode is left', async (t) => {
  type Msg = InspectMsg;
  const { url, msgs } = await inspectServer(t.teardown);

  const d = await defaultAgentDir();
  const agent = startAgent(d.config, d.state, ['--inspect', url, '--for', '60s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const entered = (mode: string) => agent.waitFor((e) => e.type === 'tick' && e.mode === mode, 20_000, `a tick in ${mode}`);
  await entered('idle');
  agent.child.stdin!.write('hello\n');
  await entered('conversation');
  agent.child.stdin!.write("let's explore\n");
  await entered('explore');
  await agent.waitFor((e) => e.type === 'stream' && e.state === 'streaming', 20_000, 'the recognition socket streaming');
  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0);

  const actors = msgs.filter((m) => m.type === '@xstate.actor');
  const byId = new Map(actors.map((a) => [a.sessionId, a]));
  t.same([...new Set(actors.map((a) => a.rootId))], [actors[0]!.sessionId], `all ${actors.length} actors share one root, the process`);
  t.equal(actors[0]!.name, 'cortexd');
  const agentActor = actors.find((a) => a.name === 'agent');
  t.equal(agentActor?.parentId, actors[0]!.sessionId, 'the agent is a child of the process root');
  const stoppedAt = (id: string) => msgs.findIndex((m) => m.type === '@xstate.snapshot' && m.sessionId === id && m.snapshot?.status === 'stopped');
  const childrenOf = (parent: Msg) => actors.filter((a) => a.parentId === parent.sessionId);
  const expected: Record<string, string[]> = {
    idle: ['action:speak', 'action:emotion', 'input:TextInput', 'model', 'loop'],
    conversation: ['action:speak', 'action:emotion', 'action:move', 'input:TextInput', 'model', 'loop'],
    explore: ['action:speak', 'action:move', 'action:emotion', 'input:SpeechlabASRInput', 'input:LocalVLMInput', 'input:TextInput', 'model', 'loop'],
  };
  const modeActors = new Map<string, Msg>();
  for (const [mode, names] of Object.entries(expected)) {
    const modeActor = actors.find((a) => a.name === `mode:${mode}`);
    t.ok(modeActor, `mode:${mode} exists`);
    t.equal(byId.get(modeActor!.parentId!)?.name, 'modes', `mode:${mode} is a child of the mode machine`);
    modeActors.set(mode, modeActor!);
    const children = childrenOf(modeActor!).map((a) => a.name);
    for (const name of names) t.ok(children.includes(name), `${name} is a child of mode:${mode}`);
  }
  const asr = childrenOf(modeActors.get('explore')!).find((a) => a.name === 'input:SpeechlabASRInput')!;
  t.ok(
    childrenOf(asr).some((a) => a.name === 'stream:asr'),
    'the recognition socket session is a child of its input: stream:asr',
  );
  // Leaving a mode stops its actor and everything under it, before the next mode's inputs start.
  for (const [left, next] of [
    ['idle', 'conversation'],
    ['conversation', 'explore'],
  ] as const) {
    const nextInput = childrenOf(modeActors.get(next)!).find((a) => a.name === 'input:TextInput')!;
    const nextStarted = msgs.indexOf(nextInput);
    for (const child of [modeActors.get(left)!, ...childrenOf(modeActors.get(left)!)]) {
      const at = stoppedAt(child.sessionId);
      t.ok(at >= 0 && at < nextStarted, `${child.name} of ${left} stopped before ${next} listened`);
    }
  }
});
