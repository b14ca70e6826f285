// The tool servers of a mode as actors (`mcp:<server>`): connect, watch, back off and reconnect; and the hub the loop calls tools through.
import type { Logger } from 'pino';
import { assign, fromCallback, fromPromise, setup, type AnyActorRef } from 'xstate';
import type { McpServerConfig } from '../src/config/schema.js';
import type { McpHub } from '../src/cortex/contracts.js';
import type { AgentBus } from '../src/cortex/events.js';
import { callMcpTool, connectMcpServer, MCP_DEFAULTS, McpCallError, type McpConnection, type McpOptions, type McpToolEntry } from '../src/cortex/mcp.js';
import { describeError } from '../src/errors.js';
import { redact } from '../src/redact.js';
import { backoffDelay } from '../src/backoff.js';

export interface McpServerInput {
  config: McpServerConfig;
  logger: Logger;
  bus: AgentBus;
  options?: McpOptions;
  /** Given the connection's asynchronous close when the actor stops, so the agent can wait for it. */
  track?: (closing: Promise<unknown>) => void;
}

interface Ctx extends McpServerInput {
  limits: typeof MCP_DEFAULTS;
  connection: McpConnection | undefined;
  attempt: number;
  error: string | undefined;
  nextDelayMs: number;
}

type Ev = { type: 'mcp.lost'; reason: string };

/** The limits of a server: the options given over the defaults (the random source stays in `options`). */
function limitsOf(options: McpOptions | undefined): typeof MCP_DEFAULTS {
  const { random: _random, ...given } = options ?? {};
  return { ...MCP_DEFAULTS, ...given };
}

const emit = (c: Ctx, state: 'connected' | 'failed' | 'stopped' | 'call', detail?: string) =>
  c.bus.emit({ type: 'mcp', at: Date.now(), server: c.config.name, state, ...(detail !== undefined ? { detail: redact(detail) } : {}) });

/**
 * One tool server: `connecting` (start, initialize, list tools; aborted when the actor stops) ->
 * `connected` (tag `connected`; a closed connection goes on to) -> `backingOff` (the backoff, then
 * connecting again). A server that cannot start never stops the mode: its tools are simply absent.
 * The connection is closed when the actor stops.
 */
export const mcpServerMachine = setup({
  types: { context: {} as Ctx, events: {} as Ev, input: {} as McpServerInput },
  actors: {
    connect: fromPromise<McpConnection, { config: McpServerConfig; logger: Logger; limits: typeof MCP_DEFAULTS }>(({ input, signal }) =>
      connectMcpServer(input.config, { logger: input.logger, connectTimeoutMs: input.limits.connectTimeoutMs, signal }),
    ),
    watch: fromCallback<{ type: 'none' }, { connection: McpConnection; track?: (p: Promise<unknown>) => void; onStopped: () => void }>(
      ({ input, sendBack }) => {
        const client = input.connection.client;
        let closing = false;
        client.onclose = () => {
          if (closing) return;
          closing = true;
          sendBack({ type: 'mcp.lost', reason: 'connection closed' } satisfies Ev);
        };
        return () => {
          if (closing) return;
          closing = true;
          const closed = client.close().catch(() => undefined);
          input.track?.(closed);
          input.onStopped();
        };
      },
    ),
  },
  delays: { retryDelay: ({ context }) => context.nextDelayMs },
  actions: {
    planRetry: assign(({ context }, params: { error: string }) => {
      const attempt = context.attempt + 1;
      const nextDelayMs = backoffDelay(attempt, { initialMs: context.limits.retryMs, maxMs: context.limits.maxRetryMs }, context.options?.random);
      context.logger.warn(`mcp server ${context.config.name} unavailable (${params.error}); retry in ${nextDelayMs} ms`);
      emit(context, 'failed', params.error);
      return { attempt, nextDelayMs, error: params.error, connection: undefined };
    }),
  },
}).createMachine({
  id: 'mcp',
  context: ({ input }) => ({ ...input, limits: limitsOf(input.options), connection: undefined, attempt: 0, error: undefined, nextDelayMs: 0 }),
  initial: 'connecting',
  states: {
    connecting: {
      invoke: {
        id: 'connect',
        src: 'connect',
        input: ({ context }) => ({ config: context.config, logger: context.logger, limits: context.limits }),
        onDone: {
          target: 'connected',
          actions: [
            assign(({ event }) => ({ connection: event.output, attempt: 0, error: undefined })),
            ({ context }) => {
              const n = context.connection!.tools.length;
              emit(context, 'connected', `${n} tools`);
              context.logger.info(`mcp server ${context.config.name} connected (${context.config.transport}), ${n} tools`);
            },
          ],
        },
        onError: { target: 'backingOff', actions: { type: 'planRetry', params: ({ event }) => ({ error: describeError(event.error) }) } },
      },
    },
    connected: {
      tags: ['connected'],
      invoke: {
        id: 'connection',
        src: 'watch',
        input: ({ context }) => ({
          connection: context.connection!,
          ...(context.track ? { track: context.track } : {}),
          onStopped: () => emit(context, 'stopped'),
        }),
      },
      on: { 'mcp.lost': { target: 'backingOff', actions: { type: 'planRetry', params: ({ event }) => ({ error: event.reason }) } } },
    },
    backingOff: { after: { retryDelay: 'connecting' } },
  },
});

interface Connected {
  connection: McpConnection;
  entry: McpToolEntry;
  limits: typeof MCP_DEFAULTS;
  context: Ctx;
}

/**
 * The hub of a mode over its `mcp:<server>` actors (`servers()` returns the running ones): the tools
 * of the servers connected now (the first server listed wins a name clash), and calls to them.
 */
export function mcpHubOf(servers: () => AnyActorRef[]): McpHub {
  const index = (): Map<string, Connected> => {
    const out = new Map<string, Connected>();
    for (const ref of servers()) {
      const snap = ref.getSnapshot() as { status: string; context: Ctx; hasTag(t: string): boolean };
      if (snap.status !== 'active' || !snap.hasTag('connected') || !snap.context.connection) continue;
      for (const entry of snap.context.connection.tools) {
        if (!out.has(entry.definition.function.name))
          out.set(entry.definition.function.name, { connection: snap.context.connection, entry, limits: snap.context.limits, context: snap.context });
      }
    }
    return out;
  };
  return {
    tools: () => [...index().values()].map((c) => c.entry.definition),
    has: (name) => index().has(name),
    async call(name, args, signal) {
      const found = index().get(name);
      if (!found) throw new McpCallError(`no connected MCP tool named ${name}`);
      emit(found.context, 'call', found.entry.tool);
      return callMcpTool(found.connection, found.entry, args, signal, found.limits);
    },
  };
}
