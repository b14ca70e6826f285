// Proves the tool-server actors and the hub over them against real servers: server-everything over stdio, an SDK server over streamable HTTP, failures retried, timeouts.
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import t from 'tap';
import { pino } from 'pino';
import { z } from 'zod';
import { filter, firstValueFrom, take, toArray } from 'rxjs';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createActor, waitFor, type AnyActorRef } from 'xstate';
import { mcpToolName } from '../../src/cortex/mcp.js';
import { mcpHub, mcpServerLogic, mcpSessionInput } from '../../actors/mcp/mcp.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { ToolDefinitionSchema } from '../../src/cloud/protocol.js';
import type { McpServerConfig } from '../../src/config/schema.js';

type McpEv = Extract<AgentEvent, { type: 'mcp' }>;
const require = createRequire(import.meta.url);
const everything = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
const logger = pino({ level: 'silent' });
const never = () => new AbortController().signal;

const stdio = (name: string, command: string, args: string[]): McpServerConfig => ({ name, transport: 'stdio', command, args, env: {}, headers: {} });

/**
 * One `mcp:<server>` actor per server (as a mode actor runs them) and the hub over them. `start`
 * resolves once every server is connected or has failed once; `stop` stops the actors.
 */
function hub(options: { retryMs?: number; callTimeoutMs?: number } = {}) {
  const bus = new AgentBus();
  const events: McpEv[] = [];
  bus.events$.subscribe((e) => e.type === 'mcp' && events.push(e));
  let refs: AnyActorRef[] = [];
  const closing: Array<Promise<unknown>> = [];
  const board = mcpHub();
  const h = {
    tools: board.tools,
    has: board.has,
    call: board.call,
    async start(configs: McpServerConfig[]) {
      const actors = configs.map((config) =>
        createActor(mcpServerLogic(), {
          input: mcpSessionInput({ config, logger, bus, options, track: (p) => void closing.push(p), onLink: board.linkOf(config.name) }),
        }).start(),
      );
      refs = actors;
      await Promise.all(actors.map((a) => waitFor(a, (s) => s.hasTag('streaming') || s.matches('backingOff'), { timeout: 20_000 })));
    },
    async stop() {
      for (const a of refs) (a as unknown as { stop(): void }).stop();
      await Promise.all(closing);
    },
  };
  const next = (state: McpEv['state'], n = 1) =>
    firstValueFrom(
      bus.events$.pipe(
        filter((e): e is McpEv => e.type === 'mcp' && e.state === state),
        take(n),
        toArray(),
      ),
    );
  return { h, bus, events, next };
}

/** An SDK McpServer over streamable HTTP (stateless: one transport per request), with a slow tool. */
async function httpServer(): Promise<{ url: string; server: Server }> {
  const build = () => {
    const mcp = new McpServer({ name: 'calc', version: '1.0.0' });
    mcp.registerTool('add', { description: 'adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }));
    mcp.registerTool('slow', { description: 'never answers in time', inputSchema: {} }, async (_args, extra) => {
      await new Promise((resolve) => extra.signal.addEventListener('abort', resolve));
      return { content: [{ type: 'text', text: 'late' }] };
    });
    return mcp;
  };
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
    const mcp = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => void transport.close().then(() => mcp.close()));
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/mcp`, server };
}

t.test('names are mcp_<server>_<tool>, sanitised and at most 64 characters', async (t) => {
  t.equal(mcpToolName('everything', 'echo'), 'mcp_everything_echo');
  t.equal(mcpToolName('my server', 'get.thing/now'), 'mcp_my_server_get_thing_now');
  t.equal(mcpToolName('s', 'x'.repeat(100)).length, 64);
});

t.test('stdio: server-everything from npm, tools listed after connect and called', async (t) => {
  const { h, events } = hub();
  t.teardown(() => h.stop());
  await h.start([stdio('everything', process.execPath, [everything, 'stdio'])]);
  t.equal(events[0]?.state, 'connected', 'connected before start() resolves');
  const names = h.tools().map((x) => x.function.name);
  t.ok(names.includes('mcp_everything_echo'), names.join(','));
  t.ok(names.includes('mcp_everything_get-sum'));
  for (const tool of h.tools()) t.ok(ToolDefinitionSchema.safeParse(tool).success, `${tool.function.name} is a valid tool`);
  const echo = h.tools().find((x) => x.function.name === 'mcp_everything_echo')!;
  t.same((echo.function.parameters as { required?: string[] }).required, ['message']);
  t.ok(h.has('mcp_everything_echo'));
  t.equal(await h.call('mcp_everything_echo', { message: 'hello robot' }, never()), 'Echo: hello robot');
  t.match(await h.call('mcp_everything_get-sum', { a: 2, b: 3 }, never()), /5/);
  await t.rejects(h.call('mcp_everything_nope', {}, never()), { name: 'McpCallError' });
  t.ok(events.some((e) => e.state === 'call' && e.detail === 'echo'));
});

t.test('a server that cannot start is reported and retried; the hub goes on without it', async (t) => {
  const { h, bus } = hub({ retryMs: 10 });
  const failuresOf = (server: string) =>
    firstValueFrom(
      bus.events$.pipe(
        filter((e): e is McpEv => e.type === 'mcp' && e.state === 'failed' && e.server === server),
        take(2),
        toArray(),
      ),
    );
  const missing = failuresOf('missing');
  const broken = failuresOf('broken');
  await h.start([stdio('broken', process.execPath, ['-e', 'process.exit(3)']), stdio('missing', '/nonexistent/mcp-server', [])]);
  t.same(h.tools(), []);
  t.match((await missing)[0]!.detail, /ENOENT/, 'reported, then retried');
  t.match((await broken)[1]!.detail, /closed/i);
  await h.stop();
});

t.test('a server that dies is reconnected', async (t) => {
  const { h, next } = hub({ retryMs: 10 });
  t.teardown(() => h.stop());
  await h.start([stdio('everything', process.execPath, [everything, 'stdio'])]);
  const pids = () =>
    (require('node:child_process') as typeof import('node:child_process'))
      .execFileSync('pgrep', ['-P', String(process.pid), '-f', 'server-everything'], { encoding: 'utf8' })
      .trim()
      .split('\n')
      .filter(Boolean)
      .map(Number);
  const [pid] = pids();
  t.ok(pid, 'child running');
  const failed = next('failed');
  const reconnected = next('connected');
  process.kill(pid!, 'SIGKILL');
  t.match((await failed)[0]!.detail, /closed/);
  await reconnected;
  t.equal(await h.call('mcp_everything_echo', { message: 'back' }, never()), 'Echo: back');
  await h.stop();
  let left: number[] = [];
  try {
    left = pids();
  } catch {
    left = []; // pgrep exits 1 when nothing matches
  }
  t.same(left, [], 'stop() leaves no server process behind');
});

t.test('streamable http: an SDK server in this process; calls time out', async (t) => {
  const { url, server } = await httpServer();
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const { h } = hub({ callTimeoutMs: 200 });
  t.teardown(() => h.stop());
  await h.start([{ name: 'calc', transport: 'http', url, args: [], env: {}, headers: {} }]);
  t.same(
    h
      .tools()
      .map((x) => x.function.name)
      .sort(),
    ['mcp_calc_add', 'mcp_calc_slow'],
  );
  t.equal(await h.call('mcp_calc_add', { a: 40, b: 2 }, never()), '42');
  await t.rejects(h.call('mcp_calc_slow', {}, never()), { name: 'McpCallError', message: /timed out/i });
  const ac = new AbortController();
  const calling = h.call('mcp_calc_slow', {}, ac.signal);
  ac.abort(new Error('mode exit'));
  await t.rejects(calling, { message: 'mode exit' });
});
