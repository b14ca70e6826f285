// MCP tool servers (stdio, sse, streamable http): connect one and list its tools, call a tool with a timeout, turn results into text.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Logger } from 'pino';
import type { RandomSource } from '../backoff.js';
import { CortexError, describeError } from '../errors.js';
import type { ToolDefinition } from '../cloud/protocol.js';
import type { McpServerConfig } from '../config/schema.js';
import { MAX_TOOL_NAME } from './tools.js';

/** Limits of the tool servers of a mode; each is optional (defaults below). */
export interface McpOptions {
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

export const MCP_DEFAULTS: Required<Omit<McpOptions, 'random'>> = {
  callTimeoutMs: 30_000,
  retryMs: 1000,
  maxRetryMs: 30_000,
  connectTimeoutMs: 15_000,
  maxResultChars: 4000,
};

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

/** One tool of a server: its own name, and its definition under the model-facing name. */
export interface McpToolEntry {
  server: string;
  tool: string;
  definition: ToolDefinition;
}

/*
 * The SDK (with its own zod 3, zod-to-json-schema and ajv: hundreds of modules) is loaded by the
 * first connection, not at start: an agent whose modes use no MCP server never loads it, and no
 * agent loads it before its first tick. Node caches the modules, so later connections pay nothing.
 */

async function makeTransport(config: McpServerConfig, logger: Logger): Promise<Transport> {
  if (config.transport === 'stdio') {
    const { getDefaultEnvironment, StdioClientTransport } = await import('@modelcontextprotocol/sdk/client/stdio.js');
    const transport = new StdioClientTransport({
      command: config.command!,
      args: config.args,
      ...(config.cwd ? { cwd: config.cwd } : {}),
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
  if (config.transport === 'sse') {
    const { SSEClientTransport } = await import('@modelcontextprotocol/sdk/client/sse.js');
    return new SSEClientTransport(url, { requestInit });
  }
  const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js');
  // The transport's own stream reconnection is off (maxRetries 0): a lost stream closes the client, and
  // the server's session actor reconnects it with the one backoff (one retry layer).
  return new StreamableHTTPClientTransport(url, {
    requestInit,
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1000, maxReconnectionDelay: 30_000, reconnectionDelayGrowFactor: 2 },
  });
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

/** A connected tool server: its client and its tools under their model-facing names. */
export interface McpConnection {
  client: Client;
  tools: McpToolEntry[];
}

export interface McpConnectOptions {
  logger: Logger;
  /** Longest the start, initialize and tools/list may take together. */
  connectTimeoutMs: number;
  /** Aborts the attempt (the owner stopped); the client is closed. */
  signal: AbortSignal;
}

/**
 * Connects one tool server and lists its tools (every page). Rejects on failure or abort, with the
 * client closed; a tool whose model-facing name clashes with another of the server is skipped.
 */
export async function connectMcpServer(config: McpServerConfig, options: McpConnectOptions): Promise<McpConnection> {
  const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
  options.signal.throwIfAborted();
  const transport = await makeTransport(config, options.logger);
  const client = new Client({ name: 'cortexd', version: '0.1.0' });
  const signal = AbortSignal.any([AbortSignal.timeout(options.connectTimeoutMs), options.signal]);
  try {
    await client.connect(transport, { timeout: options.connectTimeoutMs, signal });
    const tools: McpToolEntry[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : {}, { timeout: options.connectTimeoutMs, signal });
      for (const tool of page.tools) {
        const name = mcpToolName(config.name, tool.name);
        if (tools.some((t) => t.definition.function.name === name)) {
          options.logger.warn(`mcp server ${config.name}: tool ${tool.name} clashes with another as ${name}; skipped`);
          continue;
        }
        const description = `${tool.description ?? tool.title ?? tool.name} (tool ${tool.name} of MCP server ${config.name})`;
        const parameters = (tool.inputSchema ?? { type: 'object' }) as Record<string, unknown>;
        tools.push({ server: config.name, tool: tool.name, definition: { type: 'function', function: { name, description, parameters } } });
      }
      cursor = page.nextCursor;
    } while (cursor);
    signal.throwIfAborted();
    client.onerror = (err) => {
      options.logger.debug(`mcp ${config.name}: ${describeError(err)}`);
      // A stream that failed is a lost connection: closed here, before EventSource retries it by itself.
      if (isLostStream(err)) void client.close().catch(() => undefined);
    };
    return { client, tools };
  } catch (err) {
    await client.close().catch(() => undefined);
    throw err;
  }
}

/**
 * Transport errors that mean the connection is gone: the SSE stream failed (SseError from the SSE
 * transport, whose EventSource would otherwise reconnect on its own), the streamable HTTP transport's
 * stream could not be kept or reopened, or a request could not reach the server at all.
 */
export function isLostStream(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth += 1) {
    const { name, message, code } = e as { name?: string; message?: string; code?: unknown };
    if (name === 'SseError' || /^SSE error: /.test(message ?? '')) return true;
    if (/^(SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts)/.test(message ?? '')) return true;
    if (message === 'fetch failed' || code === 'ECONNREFUSED' || code === 'ECONNRESET' || code === 'UND_ERR_SOCKET') return true;
  }
  return false;
}

/** Calls one tool of a connected server; the result as text for the model (cut at `maxResultChars`). */
export async function callMcpTool(
  connection: McpConnection,
  entry: McpToolEntry,
  args: unknown,
  signal: AbortSignal,
  options: { callTimeoutMs: number; maxResultChars: number },
): Promise<string> {
  const argsObject = args && typeof args === 'object' && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
  try {
    const result = await connection.client.callTool({ name: entry.tool, arguments: argsObject }, undefined, { signal, timeout: options.callTimeoutMs });
    return resultText(result as Record<string, unknown>, options.maxResultChars);
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    // The server is unreachable: the connection is lost (its session actor reconnects it with the backoff).
    if (isLostStream(err)) void connection.client.close().catch(() => undefined);
    throw new McpCallError(`${entry.definition.function.name}: ${describeError(err)}`, { cause: err });
  }
}
