// The shipped mcp_tools agent as a real process: the rule-based model calls a tool of @modelcontextprotocol/server-everything (stdio), and the tool's result goes back to the model in the next round.
import t from 'tap';
import { createServer, type Server } from 'node:http';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import JSON5 from 'json5';
import { startAgent, typeLines, workDir } from '../helpers/agent-process.js';
import { startService } from '../../src/service/index.js';
import { createLogger } from '../../src/log.js';
import type { AgentEvent } from '../../src/cortex/events.js';

type Ev<T extends AgentEvent['type']> = Extract<AgentEvent, { type: T }>;
const ROOT = join(import.meta.dirname, '..', '..');

interface ChatBody {
  messages: Array<{
    role: string;
    content?: string | null;
    tool_call_id?: string;
    tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  }>;
  tools?: Array<{ function: { name: string } }>;
}

/**
 * A recording pass-through in front of the local service's chat endpoint: every request body the agent
 * sends is kept, the rule-based model of the real service answers.
 */
async function recordingProxy(target: string, apiKey: string): Promise<{ server: Server; url: string; bodies: ChatBody[] }> {
  const bodies: ChatBody[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8').on('data', (c: string) => (raw += c));
    req.on('end', () => {
      // LocalLLM also asks the server for its context size (/props, /v1/models, /api/show): not found here.
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) return void res.writeHead(404).end();
      bodies.push(JSON.parse(raw) as ChatBody);
      void fetch(`${target}${req.url!.replace(/^\/v1/, '')}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: raw,
      })
        .then(async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await r.arrayBuffer()));
        })
        .catch((err: Error) => (res.writeHead(502), res.end(err.message)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: `http://127.0.0.1:${port}/v1`, bodies };
}

t.test('mcp_tools: "use mcp_everything_echo with message=hello" calls the npm MCP server and feeds the result back', async (t) => {
  const service = await startService({ port: 0, dbPath: ':memory:', logger: createLogger({ level: 'silent' }), jwtSecret: 'x'.repeat(32) });
  t.teardown(() => service.close());
  const { apiKey } = service.admin.createApiKey('robot');
  const proxy = await recordingProxy(`${service.url}/api/core/provider_a`, apiKey);
  t.teardown(() => new Promise((r) => proxy.server.close(r)));

  // The shipped file, with the typed text on a socket and the model reached through the recording proxy.
  const w = workDir();
  const cfg = JSON5.parse(readFileSync(join(ROOT, 'config', 'mcp_tools.json5'), 'utf8')) as {
    cortex_llm: unknown;
    modes: Record<string, { agent_inputs: Array<{ type: string; config: Record<string, unknown> }>; mcp_servers: Array<{ cwd?: string }> }>;
  };
  // The copy lives elsewhere: its tool server keeps the shipped file's directory, where its relative paths point.
  for (const server of cfg.modes.assistant!.mcp_servers) server.cwd = join(ROOT, 'config');
  cfg.cortex_llm = { type: 'LocalLLM', config: { base_url: proxy.url, model: 'gen-4o-mini', history_length: 0 } };
  for (const input of cfg.modes.assistant!.agent_inputs) if (input.type === 'TextInput') input.config = { ...input.config, source: 'socket', path: w.socket };
  const config = w.file('mcp_tools.json5');
  writeFileSync(config, JSON.stringify(cfg));

  const agent = startAgent(config, w.state, ['--for', '60s']);
  t.teardown(() => void agent.child.kill('SIGKILL'));
  const connected = await agent.waitFor<Ev<'mcp'>>((e) => e.type === 'mcp' && e.server === 'everything' && e.state !== 'call', 30_000, 'the MCP server');
  t.match(connected, { state: 'connected', detail: /\d+ tools/ }, 'server-everything started over stdio and listed its tools');

  await typeLines(w.socket, ['use mcp_everything_echo with message=hello']);
  const answer = await agent.waitFor<Ev<'model.answer'>>((e) => e.type === 'model.answer' && e.tool_calls.length > 0, 15_000, 'a model answer');
  t.same(answer.tool_calls, [{ name: 'mcp_everything_echo', arguments: { message: 'hello' } }], 'the rule-based model chose the MCP tool');
  const call = await agent.waitFor<Ev<'mcp'>>((e) => e.type === 'mcp' && e.state === 'call', 15_000, 'the mcp call');
  t.match(call, { server: 'everything', detail: 'echo' });

  // The next round's request carries the assistant's tool call and the server's answer to it.
  // (the second answer of the same tick comes back through the proxy after it recorded the request)
  await agent.waitFor((e) => e.type === 'model.answer' && e.tick === answer.tick && e !== answer, 15_000, 'the second round of the tick');
  const first = proxy.bodies.find((b) => b.messages.some((m) => m.role === 'user' && /use mcp_everything_echo/.test(m.content ?? '')));
  t.ok(
    first?.tools?.some((x) => x.function.name === 'mcp_everything_echo'),
    'the MCP tools are offered to the model',
  );
  const next = proxy.bodies.find((b) => b.messages.some((m) => m.role === 'tool'));
  t.ok(next, 'a second model round was asked');
  const assistant = next!.messages.find((m) => m.role === 'assistant' && m.tool_calls?.length);
  const tool = next!.messages.find((m) => m.role === 'tool');
  t.equal(assistant?.tool_calls?.[0]?.function.name, 'mcp_everything_echo');
  t.equal(tool?.tool_call_id, assistant?.tool_calls?.[0]?.id, 'the result answers that call');
  t.equal(tool?.content, 'Echo: hello', "the MCP server's result reaches the model");
  const spoken = await agent.waitFor<Ev<'action'>>((e) => e.type === 'action' && e.name === 'speak' && e.state === 'done', 15_000, 'the result spoken');
  t.match(spoken.value, { sentence: /Echo: hello/ }, 'the model answers with the result');
  t.equal(agent.events.filter((e) => e.type === 'mcp' && e.state === 'call').length, 1, 'the tool is called once, not once per round');

  agent.child.kill('SIGTERM');
  t.equal(await agent.exited, 0, 'exit 0 after SIGTERM');
  t.ok(
    agent.events.some((e) => e.type === 'mcp' && e.state === 'stopped'),
    'the server was stopped',
  );
});
