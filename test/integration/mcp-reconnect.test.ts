// A tool server over SSE killed and started again: its session actor (`mcp:<server>`, the one reconnect engine) backs off with growing waits, reconnects once the server is back, and the tools answer again.
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { pino } from 'pino';
import { createActor, type AnyActorRef, type InspectionEvent } from 'xstate';
import { mcpHub, mcpServerLogic, mcpSessionInput } from '../../actors/mcp/mcp.js';
import { AgentBus, type AgentEvent } from '../../src/cortex/events.js';
import { freePort } from '../support/mosquitto.js';
import { until } from '../helpers/wait.js';

t.setTimeout(300_000);
type McpEv = Extract<AgentEvent, { type: 'mcp' }>;
const SERVER = join(import.meta.dirname, '..', 'fixtures', 'mcp', 'sse-server.mjs');
const never = () => new AbortController().signal;

/** Starts the SSE server on `port`; resolves once it listens. */
async function startServer(port: number): Promise<ChildProcess & { sessions: () => number }> {
  const child = spawn(process.execPath, [SERVER, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
  await until('the SSE server listening', () => out.includes('listening'), 20_000);
  return Object.assign(child, { sessions: () => out.match(/^session /gm)?.length ?? 0 });
}

const exited = (child: ChildProcess) => new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r())));

t.test('sse: the server killed and started again; the session actor backs off, reconnects once, and the tools answer again', async (t) => {
  const port = await freePort();
  let server = await startServer(port);
  t.teardown(() => void server.kill('SIGKILL'));
  const bus = new AgentBus();
  const events: McpEv[] = [];
  bus.events$.subscribe((e) => e.type === 'mcp' && events.push(e));
  const states: Array<{ state: string; attempt?: number; delay_ms?: number }> = [];
  const seen: string[] = [];
  const closing: Array<Promise<unknown>> = [];
  const hub = mcpHub();
  const input = mcpSessionInput({
    config: { name: 'calc', transport: 'sse', url: `http://127.0.0.1:${port}/sse`, args: [], env: {}, headers: {} },
    logger: pino({ level: 'silent' }),
    bus,
    options: { retryMs: 100, maxRetryMs: 1000, connectTimeoutMs: 5000 },
    track: (p) => void closing.push(p),
    onLink: hub.linkOf('calc'),
  });
  // The owner's view of the engine: every state event, as the agent's bus readers would get them.
  const hook = input.hooks.state!;
  input.hooks.state = (e) => {
    states.push({ state: e.state, attempt: e.attempt, ...(e.delay_ms !== undefined ? { delay_ms: e.delay_ms } : {}) });
    hook(e);
  };
  const actor = createActor(mcpServerLogic(), {
    input,
    systemId: 'mode:test/mcp:calc',
    inspect: (e: InspectionEvent) => {
      if (e.type !== '@xstate.snapshot') return;
      const ref = e.actorRef as AnyActorRef;
      if (ref.system.get('mode:test/mcp:calc') !== ref) return;
      const value = (e.snapshot as { value?: unknown }).value;
      const state = typeof value === 'string' ? value : value && typeof value === 'object' ? Object.keys(value)[0] : undefined;
      if (state && seen.at(-1) !== state) seen.push(state);
    },
  }).start();
  t.teardown(() => actor.stop());

  await until('the first connection', () => events.some((e) => e.state === 'connected'));
  t.equal(await hub.call('mcp_calc_add', { a: 40, b: 2 }, never()), '42');
  t.equal(server.sessions(), 1, 'one SSE session');

  server.kill('SIGKILL');
  await exited(server);
  // The stream's loss is the engine's (EventSource does not retry on its own): failed attempts back off, growing.
  const backoffs = () => states.filter((s) => s.state === 'backingOff' && (s.attempt ?? 0) >= 2);
  await until('three backoffs while the server is down', () => backoffs().length >= 3);
  const [b1, b2, b3] = backoffs();
  t.match(
    events.find((e) => e.state === 'failed'),
    { server: 'calc', detail: /closed|SSE|fetch failed|ECONNREFUSED/ },
    'the loss is on the bus',
  );
  t.same([b1!.attempt, b2!.attempt, b3!.attempt], [2, 3, 4], 'attempts counted');
  t.ok(b3!.delay_ms! >= b1!.delay_ms! && b3!.delay_ms! <= 1000, `the wait grows under its cap (${b1!.delay_ms}, ${b2!.delay_ms}, ${b3!.delay_ms} ms)`);
  t.same(hub.tools(), [], 'no tools while disconnected');
  await t.rejects(hub.call('mcp_calc_add', { a: 1, b: 1 }, never()), { name: 'McpCallError', message: /no connected MCP tool/ });

  const connectedBefore = events.filter((e) => e.state === 'connected').length;
  server = await startServer(port);
  await until('the reconnection', () => events.filter((e) => e.state === 'connected').length > connectedBefore);
  t.equal(await hub.call('mcp_calc_add', { a: 2, b: 3 }, never()), '5', 'the tools answer again');
  t.equal(server.sessions(), 1, 'one SSE session on the new server: no second connection beside it');
  t.equal(events.filter((e) => e.state === 'connected').length, connectedBefore + 1, 'one reconnection');
  for (const state of ['connecting', 'streaming', 'backingOff']) t.ok(seen.includes(state), `the inspector saw mcp:calc ${state} (${seen.join(' > ')})`);

  actor.stop();
  await Promise.all(closing);
  t.equal(events.at(-1)?.state, 'stopped', 'stopping closes the connection');
});
