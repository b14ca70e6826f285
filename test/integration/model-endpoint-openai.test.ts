// An OpenAI-compatible model in two lines of .env (CORTEX_LLM_BASE_URL, OM_API_KEY): check accepts a key of any shape, and the built CLI's run sends `<base>/chat/completions` to a real HTTP server in this test, streamed and not.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { MAIN, startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { requireBuild } from '../helpers/requires.js';
import type { AgentEvent } from '../../src/cortex/events.js';

t.setTimeout(240_000);
requireBuild();

/** A key of the shape OpenAI-compatible services hand out: not the hosted API's key_live_/key_test_. */
const KEY = 'sk-proj-Zq8dW3vT6yL1nB4mK7pR0sX2cF5hJ9gA';
const SENTENCE = 'Hello from your own model server.';

interface Seen {
  method: string;
  path: string;
  auth: string | undefined;
  body: { model?: string; stream?: boolean; messages?: Array<{ role: string; content: unknown }>; tools?: Array<{ function: { name: string } }> };
}

/**
 * A chat-completions server as OpenAI documents it, under `/v1`: a whole `chat.completion`, or with
 * `stream: true` server-sent `chat.completion.chunk`s (a tool call's arguments in pieces) ending with
 * `data: [DONE]`. It answers a user turn with speak(SENTENCE) and refuses a wrong key with OpenAI's 401 body.
 */
async function openAiServer(): Promise<{ base: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (d: string) => (raw += d));
    req.on('end', () => {
      let body: Seen['body'] = {};
      try {
        body = raw ? (JSON.parse(raw) as Seen['body']) : {};
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'invalid JSON', type: 'invalid_request_error' } }));
        return;
      }
      seen.push({ method: req.method ?? '', path: req.url ?? '', auth: req.headers.authorization, body });
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `Unknown request URL: ${req.method} ${req.url}`, type: 'invalid_request_error' } }));
        return;
      }
      if (req.headers.authorization !== `Bearer ${KEY}`) {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } }));
        return;
      }
      const created = Math.floor(Date.now() / 1000);
      const model = body.model ?? 'unknown';
      const userTurn = (body.messages ?? []).some((m) => m.role === 'user' && /hello there/i.test(String(m.content)));
      const canSpeak = (body.tools ?? []).some((tool) => tool.function.name === 'speak');
      const args = JSON.stringify({ sentence: SENTENCE });
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-${seen.length}`,
            object: 'chat.completion',
            created,
            model,
            choices: [
              {
                index: 0,
                message:
                  userTurn && canSpeak
                    ? { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'speak', arguments: args } }] }
                    : { role: 'assistant', content: '' },
                finish_reason: userTurn && canSpeak ? 'tool_calls' : 'stop',
              },
            ],
            usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 },
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const chunk = (delta: Record<string, unknown>, finish: string | null) =>
        res.write(
          `data: ${JSON.stringify({ id: `chatcmpl-${seen.length}`, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`,
        );
      if (userTurn && canSpeak) {
        chunk(
          { role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'speak', arguments: '' } }] },
          null,
        );
        for (const piece of [args.slice(0, 9), args.slice(9, 25), args.slice(25)]) chunk({ tool_calls: [{ index: 0, function: { arguments: piece } }] }, null);
        chunk({}, 'tool_calls');
      } else {
        chunk({ role: 'assistant', content: '' }, null);
        chunk({}, 'stop');
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}/v1`,
    seen,
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

/** A configuration that names only the hosted model (no service block, no key): what a newcomer's template looks like to this feature. */
function configText(socket: string, stream: boolean): string {
  return JSON.stringify({
    version: 'v1.0.5',
    name: 'own_model',
    default_mode: 'chat',
    allow_manual_switching: false,
    mode_memory_enabled: false,
    api_key: '',
    system_governance: 'obey',
    cortex_llm: { type: 'CloudLLM', config: { provider: 'provider_a', model: 'gen-4o-mini', history_length: 0, stream } },
    modes: {
      chat: {
        display_name: 'Chat',
        description: 'talks',
        system_prompt_base: 'You are a robot in conversation. Answer briefly.',
        hertz: 4,
        agent_inputs: [{ type: 'TextInput', config: { source: 'socket', path: socket, descriptor: 'Voice' } }],
        agent_actions: [{ name: 'speak', llm_label: 'speak', connector: 'console' }],
      },
    },
  });
}

// Only the .env file of each test names the endpoint and the key.
for (const k of Object.keys(process.env)) if (/^(OM_API_KEY$|CORTEX_LLM_|CORTEX_(BASE|WS_BASE|ASR_WS|VLM_WS)_URL$)/.test(k)) delete process.env[k];
const clean: NodeJS.ProcessEnv = { ...process.env };

const server = await openAiServer();
t.teardown(() => server.close());

t.test('check: two lines of .env send the model to the server, and a key of any shape is no placeholder', async (t) => {
  const w = workDir();
  const config = w.file('own_model.json5');
  writeFileSync(config, configText(w.socket, true));
  const envFile = w.file('.env');
  writeFileSync(envFile, `CORTEX_LLM_BASE_URL=${server.base}\nOM_API_KEY=${KEY}\n`);
  const r = spawnSync(process.execPath, [MAIN, 'check', '--config', config], { env: { ...clean, CORTEX_ENV_FILE: envFile }, encoding: 'utf8' });
  t.equal(r.status, 0, r.stderr);
  t.match(
    r.stdout,
    `model: cortex_llm: CloudLLM provider_a/gen-4o-mini -> model gen-4o-mini at ${server.base}/chat/completions (CORTEX_LLM_BASE_URL, the key in OM_API_KEY)`,
  );
  t.match(r.stdout, /^ok: /m);
  t.notMatch(`${r.stdout}${r.stderr}`, /placeholder|no key_live_|\.invalid/, 'no placeholder key or address is reported');
  t.notMatch(`${r.stdout}${r.stderr}`, KEY, 'the key is never printed');
  t.equal(server.seen.length, 0, 'check calls nothing');

  // A base that is not a URL: one error naming the variable and what to write.
  writeFileSync(envFile, `CORTEX_LLM_BASE_URL=127.0.0.1:8080/v1\nOM_API_KEY=${KEY}\n`);
  const bad = spawnSync(process.execPath, [MAIN, 'check', '--config', config], { env: { ...clean, CORTEX_ENV_FILE: envFile }, encoding: 'utf8' });
  t.equal(bad.status, 2, 'a bad base is a problem (exit 2)');
  t.match(`${bad.stdout}${bad.stderr}`, /CORTEX_LLM_BASE_URL: (not a URL|scheme 127\.0\.0\.1 is not allowed).*http/);
});

for (const stream of [true, false]) {
  t.test(`run: the answer comes from <base>/chat/completions (${stream ? 'streamed' : 'not streamed'}) and is spoken`, async (t) => {
    const w = workDir();
    const config = w.file('own_model.json5');
    writeFileSync(config, configText(w.socket, stream));
    const envFile = w.file('.env');
    writeFileSync(envFile, `CORTEX_LLM_BASE_URL=${server.base}\nOM_API_KEY=${KEY}\n`);
    const from = server.seen.length;
    const agent = startAgent(config, w.state, ['--for', '90s'], { CORTEX_ENV_FILE: envFile });
    t.teardown(() => void agent.child.kill('SIGKILL'));
    await agent.waitFor((e) => e.type === 'tick', 60_000, 'the first tick');
    await typeLines(w.socket, ['hello there']);
    const spoken = await agent.waitFor<Extract<AgentEvent, { type: 'action' }>>(
      (e) => e.type === 'action' && e.label === 'speak' && e.state === 'done',
      60_000,
      'the server answer spoken',
    );
    t.same(spoken.value, { sentence: SENTENCE }, "the server's answer is what the robot says");
    agent.child.kill('SIGTERM');
    t.equal(await agent.exited, 0, 'stops cleanly');

    const calls = server.seen.slice(from).filter((s) => s.method === 'POST');
    t.ok(calls.length > 0, 'the server was called');
    t.same([...new Set(calls.map((c) => c.path))], ['/v1/chat/completions'], 'only <base>/chat/completions, never /api/core/provider_a/...');
    t.ok(
      calls.every((c) => c.auth === `Bearer ${KEY}`),
      'with the key as a bearer token',
    );
    t.ok(
      calls.every((c) => Boolean(c.body.stream) === stream),
      stream ? 'streamed (stream: true)' : 'whole answers (no stream)',
    );
    t.ok(
      calls.some((c) => c.body.model === 'gen-4o-mini' && (c.body.tools ?? []).some((tool) => tool.function.name === 'speak')),
      'the model name and the speak tool are sent',
    );
    t.notMatch(agent.stderr(), KEY, 'the key is never logged');
  });
}
