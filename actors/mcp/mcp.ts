// The tool servers of a mode as session actors (`mcp:<server>`, actors/streams/session-machine.ts); and the hub the loop calls tools through.
import type { Logger } from 'pino';
import type { McpServerConfig } from '../../src/config/schema.js';
import type { McpHub } from '../../src/cortex/contracts.js';
import type { AgentBus } from '../../src/cortex/events.js';
import type { LinkEvent, StreamLink } from '../../src/cloud/link.js';
import { callMcpTool, connectMcpServer, MCP_DEFAULTS, McpCallError, type McpConnection, type McpOptions, type McpToolEntry } from '../../src/cortex/mcp.js';
import { redact } from '../../src/redact.js';
import { streamSessionLogic, type SessionInput } from '../streams/session-machine.js';

export interface McpServerInput {
  config: McpServerConfig;
  logger: Logger;
  bus: AgentBus;
  options?: McpOptions;
  /** Given the connection's asynchronous close when the actor stops, so the agent can wait for it. */
  track?: (closing: Promise<unknown>) => void;
  /** Told the open link when the actor starts streaming, and undefined when it stops (the hub's `linkOf(server)`). */
  onLink?: (link: McpLink | undefined) => void;
}

/** An open connection to a tool server, as its session actor holds it: the tools, and calls to them. */
export interface McpLink extends StreamLink {
  readonly server: string;
  readonly tools: readonly McpToolEntry[];
  call(entry: McpToolEntry, args: unknown, signal: AbortSignal): Promise<string>;
}

/** The limits of a server: the options given over the defaults (the random source stays in `options`). */
function limitsOf(options: McpOptions | undefined): typeof MCP_DEFAULTS {
  const { random: _random, ...given } = options ?? {};
  return { ...MCP_DEFAULTS, ...given };
}

const emit = (input: McpServerInput, state: 'connected' | 'failed' | 'stopped' | 'call', detail?: string) =>
  input.bus.emit({ type: 'mcp', at: Date.now(), server: input.config.name, state, ...(detail !== undefined ? { detail: redact(detail) } : {}) });

/** The connection's link: its close (the server exited, the stream ended) and, when its actor stops, the client closed (tracked). */
function mcpLink(input: McpServerInput, connection: McpConnection, limits: typeof MCP_DEFAULTS): McpLink {
  let listener: ((event: LinkEvent) => void) | undefined;
  let lost: LinkEvent | undefined;
  let closed = false;
  connection.client.onclose = () => {
    if (closed) return;
    closed = true;
    lost = { type: 'close', code: 1006, reason: 'connection closed' };
    listener?.(lost);
  };
  return {
    server: input.config.name,
    tools: connection.tools,
    call(entry, args, signal) {
      emit(input, 'call', entry.tool);
      return callMcpTool(connection, entry, args, signal, limits);
    },
    bufferedAmount: () => 0,
    subscribe(l) {
      listener = l;
      // Closed between the connect and the actor's watch: said now.
      if (lost) queueMicrotask(() => listener?.(lost!));
      return () => {
        listener = undefined;
      };
    },
    close() {
      if (closed) return;
      closed = true;
      input.track?.(connection.client.close().catch(() => undefined));
      emit(input, 'stopped');
    },
  };
}

const RECONNECT_AT_ONCE = 'reconnecting at once: ';

/**
 * The session machine's input for one tool server (stdio, sse or streamable http): the session
 * machine (actors/streams/session-machine.ts with src/backoff.ts) runs it as `mcp:<server>`.
 * `connecting` starts the server (or opens the stream), initializes and lists the tools, within
 * `connectTimeoutMs`; `streaming` (tag `streaming`) holds the link the hub calls tools through; a
 * closed connection is replaced at once (it was healthy: listed tools), a failed attempt waits the
 * backoff (`retryMs` doubling to `maxRetryMs`, with jitter) in `backingOff`. Each loss is one `failed`
 * bus event with the reason; a server that cannot start never stops the mode: its tools are absent.
 */
export function mcpSessionInput(input: McpServerInput): SessionInput {
  const limits = limitsOf(input.options);
  const { config, logger } = input;
  const random = input.options?.random;
  return {
    connect: async (signal) => mcpLink(input, await connectMcpServer(config, { logger, connectTimeoutMs: limits.connectTimeoutMs, signal }), limits),
    prefix: 'mcp',
    ...(random ? { random } : {}),
    timing: {
      // connectMcpServer times itself out first, with the SDK's reason.
      connectTimeoutMs: limits.connectTimeoutMs + 1000,
      keepaliveMs: 60_000,
      backoffInitialMs: limits.retryMs,
      backoffMaxMs: limits.maxRetryMs,
      healthyAfterMs: 0,
    },
    hooks: {
      attach: (link) => {
        const n = (link as McpLink).tools.length;
        emit(input, 'connected', `${n} tools`);
        logger.info(`mcp server ${config.name} connected (${config.transport}), ${n} tools`);
        input.onLink?.(link as McpLink);
      },
      detach: () => input.onLink?.(undefined),
      keepalive: () => undefined,
      onMessage: () => [],
      isBenignClose: () => false,
      state: (e) => {
        const reason = e.reason ?? 'connection lost';
        if (e.state === 'backingOff') {
          logger.warn(`mcp server ${config.name} unavailable (${reason}); retry in ${e.delay_ms ?? 0} ms`);
          emit(input, 'failed', reason);
        } else if (e.state === 'connecting' && reason.startsWith(RECONNECT_AT_ONCE)) {
          logger.warn(`mcp server ${config.name} unavailable (${reason.slice(RECONNECT_AT_ONCE.length)}); reconnecting`);
          emit(input, 'failed', reason.slice(RECONNECT_AT_ONCE.length));
        }
      },
    },
  };
}

/** The actor of one tool server (`mcp:<server>`): the session machine, with `mcpSessionInput` as its input. */
export const mcpServerLogic = streamSessionLogic;

/** The hub the loop calls tools through, and where the `mcp:<server>` actors tell it their links. */
export interface McpBoard extends McpHub {
  /** What server `server`'s actor calls (`McpServerInput.onLink`) when its link opens and closes; the first server asked for ranks first. */
  linkOf(server: string): (link: McpLink | undefined) => void;
}

/**
 * The hub of a mode's tool servers, fed by their actors (attach: the link; detach: none) rather than
 * read from their snapshots: the tools of the servers connected now (the server listed first wins a
 * name clash), and calls to them. One per run of a mode, like the actors that feed it.
 */
export function mcpHub(): McpBoard {
  // By server, in the order the servers were listed (a Map keeps its insertion order).
  const links = new Map<string, McpLink | undefined>();
  const index = (): Map<string, { link: McpLink; entry: McpToolEntry }> => {
    const out = new Map<string, { link: McpLink; entry: McpToolEntry }>();
    for (const link of links.values()) {
      if (!link) continue;
      for (const entry of link.tools) if (!out.has(entry.definition.function.name)) out.set(entry.definition.function.name, { link, entry });
    }
    return out;
  };
  return {
    linkOf(server) {
      if (!links.has(server)) links.set(server, undefined);
      return (link) => links.set(server, link);
    },
    tools: () => [...index().values()].map((c) => c.entry.definition),
    has: (name) => index().has(name),
    async call(name, args, signal) {
      const found = index().get(name);
      if (!found) throw new McpCallError(`no connected MCP tool named ${name}`);
      return found.link.call(found.entry, args, signal);
    },
  };
}
