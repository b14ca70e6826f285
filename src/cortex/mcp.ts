// The MCP hub of a mode: connects its tool servers (stdio, sse, streamable http), lists their tools, calls them with a timeout, retries the dead.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Logger } from 'pino';
import { Backoff, type RandomSource } from '../backoff.js';
import { CortexError, describeError } from '../errors.js';
import { redact } from '../redact.js';
import type { ToolDefinition } from '../cloud/protocol.js';
import type { McpServerConfig } from '../config/schema.js';
import type { McpHub } from './contracts.js';
import type { AgentBus } from './events.js';
import { MAX_TOOL_NAME } from './tools.js';

export interface McpHubDeps {
  logger: Logger;
  bus: AgentBus;
  /** Longest a tool call may take; default 30 s. */
  callTimeoutMs?: number;
  /** First retry delay after a failure, doubled up to `maxRetryMs` (src/backoff.ts, equal jitter); default 1 s. */
  retryMs?: number;
  maxRetryMs?: number;
  /** Random source of the backoff jitter (tests). */
  random?: RandomSource;
  /** Longest a connection (start + initialize + tools/list) may take; default 15 s. */
  connectTimeoutMs?: number;
  /** Longest text handed back to the model per call; longer results are cut with a note. */
  maxResultChars?: number;
}

/** A tool call that failed: unknown tool, server not connected, timeout, or the server's error. */
export class McpCallError extends CortexError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('mcp_call', message, options);
    this.name = 'McpCallError';
  }
}

/** `[a-zA-Z0-9_-]` only: anything else becomes `_`. */
export function sanitizeName(s: string): string {
  return s.replace(/[^A-Za-z0-9_-]/g, '_');
}

/** The model-facing name of a server's tool: `mcp_<server>_<tool>`, sanitised, at most 64 characters. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp_${sanitizeName(server)}_${sanitizeName(tool)}`.slice(0, MAX_TOOL_NAME);
}

interface ToolEntry {
  server: string;
  tool: string;
  definition: ToolDefinition;
}

interface ServerState {
  config: McpServerConfig;
  client: Client | undefined;
  tools: ToolEntry[];
  /** Failures since the last good connection; reset once connected and listed. */
  backoff: Backoff;
  timer: NodeJS.Timeout | undefined;
  connecting: Promise<void> | undefined;
  /** Aborts a connection attempt in progress (stop). */
  abort: AbortController;
}

function makeTransport(config: McpServerConfig, logger: Logger): Transport {
  if (config.transport === 'stdio') {
    const transport = new StdioClientTransport({
      command: config.command!,
      args: config.args,
      env: { ...getDefaultEnvironment(), ...config.env },
      stderr: 'pipe',
    });
    // The server's stderr is its log: kept out of our stdout, logged at debug level, one line at a time.
    transport.stderr?.on('data', (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n')) if (line.trim()) logger.debug(`mcp ${config.name}: ${line.slice(0, 500)}`);
    });
    return transport;
  }
  const url = new URL(config.url!);
  const requestInit = { headers: config.headers };
  return config.transport === 'sse' ? new SSEClientTransport(url, { requestInit }) : new StreamableHTTPClientTransport(url, { requestInit });
}

/** A tool result as text for the model: text parts verbatim, other parts summarised, errors marked. */
export function resultText(result: Record<string, unknown>, max: number): string {
  const content = Array.isArray(result.content) ? (result.content as Array<Record<string, unknown>>) : [];
  const parts = content.map((c) => {
    if (c.type === 'text') return String(c.text ?? '');
    if (c.type === 'image' || c.type === 'audio') return `[${String(c.type)} ${String(c.mimeType ?? '')}, ${String(c.data ?? '').length} base64 chars]`;
    if (c.type === 'resource') {
      const r = (c.resource ?? {}) as Record<string, unknown>;
      return typeof r.text === 'string' ? r.text : `[resource ${String(r.uri ?? '')}]`;
    }
    if (c.type === 'resource_link') return `[resource ${String(c.uri ?? '')}]`;
    return JSON.stringify(c);
  });
  if (!parts.length && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  if (!parts.length && 'toolResult' in result) parts.push(JSON.stringify(result.toolResult));
  let text = parts.join('\n');
  if (result.isError === true) text = `error: ${text}`;
  return text.length > max ? `${text.slice(0, max)} [cut: ${text.length - max} more characters]` : text;
}

export function createMcpHub(deps: McpHubDeps): McpHub {
  const callTimeoutMs = deps.callTimeoutMs ?? 30_000;
  const retryMs = deps.retryMs ?? 1000;
  const maxRetryMs = deps.maxRetryMs ?? 30_000;
  const connectTimeoutMs = deps.connectTimeoutMs ?? 15_000;
  const maxResultChars = deps.maxResultChars ?? 4000;
  const servers = new Map<string, ServerState>();
  let stopped = false;

  const emit = (server: string, state: 'connected' | 'failed' | 'stopped' | 'call', detail?: string) =>
    deps.bus.emit({ type: 'mcp', at: Date.now(), server, state, ...(detail !== undefined ? { detail: redact(detail) } : {}) });

  const toolIndex = () => {
    const index = new Map<string, ToolEntry>();
    for (const s of servers.values()) for (const t of s.tools) if (!index.has(t.definition.function.name)) index.set(t.definition.function.name, t);
    return index;
  };

  const scheduleRetry = (s: ServerState, reason: string) => {
    if (stopped || s.timer) return;
    const delay = s.backoff.fail();
    deps.logger.warn(`mcp server ${s.config.name} unavailable (${reason}); retry in ${delay} ms`);
    s.timer = setTimeout(() => {
      s.timer = undefined;
      void connect(s);
    }, delay);
  };

  const lost = (s: ServerState, client: Client, reason: string) => {
    if (s.client !== client) return;
    s.client = undefined;
    s.tools = [];
    void client.close().catch(() => undefined);
    if (stopped) return;
    emit(s.config.name, 'failed', reason);
    scheduleRetry(s, reason);
  };

  const connectOnce = async (s: ServerState): Promise<void> => {
    const config = s.config;
    const client = new Client({ name: 'cortexd', version: '0.1.0' });
    const transport = makeTransport(config, deps.logger);
    const failed = (err: unknown) => {
      void client.close().catch(() => undefined);
      throw err;
    };
    const timeout = AbortSignal.any([AbortSignal.timeout(connectTimeoutMs), s.abort.signal]);
    await client.connect(transport, { timeout: connectTimeoutMs, signal: timeout }).catch(failed);
    const tools: ToolEntry[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: connectTimeoutMs, signal: timeout }).catch(failed);
      for (const tool of page.tools) {
        const name = mcpToolName(config.name, tool.name);
        if (tools.some((t) => t.definition.function.name === name)) {
          deps.logger.warn(`mcp server ${config.name}: tool ${tool.name} clashes with another as ${name}; skipped`);
          continue;
        }
        const description = `${tool.description ?? tool.title ?? tool.name} (tool ${tool.name} of MCP server ${config.name})`;
        const parameters = (tool.inputSchema ?? { type: 'object' }) as Record<string, unknown>;
        tools.push({ server: config.name, tool: tool.name, definition: { type: 'function', function: { name, description, parameters } } });
      }
      cursor = page.nextCursor;
    } while (cursor);
    if (stopped) {
      await client.close().catch(() => undefined);
      return;
    }
    client.onclose = () => lost(s, client, 'connection closed');
    client.onerror = (err) => deps.logger.debug(`mcp ${config.name}: ${describeError(err)}`);
    s.client = client;
    s.tools = tools;
    s.backoff.reset();
    emit(config.name, 'connected', `${tools.length} tools`);
    deps.logger.info(`mcp server ${config.name} connected (${config.transport}), ${tools.length} tools`);
  };

  const connect = (s: ServerState): Promise<void> => {
    if (stopped || s.client || s.connecting) return s.connecting ?? Promise.resolve();
    s.connecting = connectOnce(s)
      .catch((err: unknown) => {
        const reason = describeError(err);
        emit(s.config.name, 'failed', reason);
        scheduleRetry(s, reason);
      })
      .finally(() => {
        s.connecting = undefined;
      });
    return s.connecting;
  };

  return {
    async start(configs) {
      stopped = false;
      for (const config of configs) {
        if (servers.has(config.name)) {
          deps.logger.warn(`mcp server ${config.name} listed twice; the first is used`);
          continue;
        }
        servers.set(config.name, {
          config,
          client: undefined,
          tools: [],
          backoff: new Backoff({ initialMs: retryMs, maxMs: maxRetryMs }, deps.random),
          timer: undefined,
          connecting: undefined,
          abort: new AbortController(),
        });
      }
      await Promise.all([...servers.values()].map((s) => connect(s)));
    },
    tools: () => [...toolIndex().values()].map((t) => t.definition),
    has: (name) => toolIndex().has(name),
    async call(name, args, signal) {
      const entry = toolIndex().get(name);
      if (!entry) throw new McpCallError(`no connected MCP tool named ${name}`);
      const s = servers.get(entry.server);
      if (!s?.client) throw new McpCallError(`MCP server ${entry.server} is not connected`);
      emit(entry.server, 'call', entry.tool);
      const argsObject = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
      try {
        const result = await s.client.callTool({ name: entry.tool, arguments: argsObject }, undefined, { signal, timeout: callTimeoutMs });
        return resultText(result as Record<string, unknown>, maxResultChars);
      } catch (err) {
        if (signal.aborted) throw signal.reason;
        throw new McpCallError(`${name}: ${describeError(err)}`, { cause: err });
      }
    },
    async stop() {
      stopped = true;
      const closing: Array<Promise<unknown>> = [];
      for (const s of servers.values()) {
        if (s.timer) clearTimeout(s.timer);
        s.timer = undefined;
        s.abort.abort(new CortexError('mcp_stopped', 'tool servers stopped'));
        const client = s.client;
        s.client = undefined;
        s.tools = [];
        if (client) closing.push(client.close().catch(() => undefined));
        if (s.connecting) closing.push(s.connecting);
        emit(s.config.name, 'stopped');
      }
      await Promise.all(closing);
      servers.clear();
    },
  };
}
