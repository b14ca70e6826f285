// An OpenAI-compatible chat upstream on loopback (tests and benchmarks) that answers with scripted tool calls at a chosen first-token delay and token rate.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedCall {
  name: string;
  arguments: unknown;
}

export interface ScriptedUpstreamOptions {
  /** The answer: these tool calls (default: one `speak` with `sentence`). */
  toolCalls?: ScriptedCall[];
  sentence?: string;
  /** Or a function of the request (its messages, `stream`, `model`...), for answers that depend on it. */
  answer?: (request: ScriptedRequest['body']) => { toolCalls?: ScriptedCall[]; text?: string };
  /** The `usage` the answer reports (default: 100 prompt tokens and one per token sent); may be anything, for tests of bogus usage. */
  usage?: (request: ScriptedRequest['body']) => unknown;
  firstTokenMs?: number;
  tokensPerSecond?: number;
  /** Characters per token (the arguments JSON is cut into tokens of this size). Default 4. */
  charsPerToken?: number;
}

export interface ScriptedRequest {
  at: number;
  /** The request's path (`/v1/chat/completions`) and its authorization header, as the upstream got them. */
  path: string;
  authorization?: string;
  stream: boolean;
  body: { messages: Array<{ role: string; content: unknown }>; [k: string]: unknown };
  /** True when the client closed the connection before the answer ended (an aborted stream). */
  aborted: boolean;
  /** Tokens sent before the end or the abort. */
  tokensSent: number;
}

export interface ScriptedUpstream {
  /** `http://127.0.0.1:PORT/v1`: requests go to `${baseUrl}/chat/completions`. */
  baseUrl: string;
  requests: ScriptedRequest[];
  /** When set, the next request is answered with this status and `{error: {message}}` (then it clears). */
  failNext?: { status: number; message: string };
  /** When true, the next request is answered 200 with a body that is not JSON (then it clears). */
  garbageNext?: boolean;
  close(): Promise<void>;
}

/**
 * Every chat request is answered with the script. Streamed (`stream: true`) as chat.completion.chunk
 * SSE: the first token `firstTokenMs` after the request, then one token every 1000 / `tokensPerSecond`
 * ms, each tool call's arguments JSON cut into tokens of `charsPerToken` characters; then the finish
 * reason, a usage chunk and `[DONE]`. Not streamed, the whole completion comes when the last token would
 * have. A client that closes early stops the stream (`aborted`).
 */
export async function startScriptedUpstream(options: ScriptedUpstreamOptions = {}): Promise<ScriptedUpstream> {
  const firstTokenMs = options.firstTokenMs ?? 300;
  const gap = 1000 / (options.tokensPerSecond ?? 40);
  const size = options.charsPerToken ?? 4;
  const requests: ScriptedRequest[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const sleep = (ms: number) =>
    new Promise<void>((r) => {
      const t = setTimeout(() => (timers.delete(t), r()), ms);
      timers.add(t);
    });
  const tokensOf = (text: string) => text.match(new RegExp(`[\\s\\S]{1,${size}}`, 'g')) ?? [];
  const handle: ScriptedUpstream = { baseUrl: '', requests, close: async () => undefined };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      void (async () => {
        // Like a real server: other paths (a client asking /props or /api/show for the context size) are not found.
        if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
          res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found"}');
          return;
        }
        const body = JSON.parse(raw) as ScriptedRequest['body'];
        const record: ScriptedRequest = {
          at: Date.now(),
          path: req.url ?? '',
          ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
          stream: Boolean(body.stream),
          body,
          aborted: false,
          tokensSent: 0,
        };
        requests.push(record);
        if (handle.failNext) {
          const f = handle.failNext;
          handle.failNext = undefined;
          res.writeHead(f.status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: f.message } }));
          return;
        }
        if (handle.garbageNext) {
          handle.garbageNext = false;
          res.writeHead(200, { 'content-type': 'application/json' }).end('<html>oops');
          return;
        }
        const script = options.answer?.(body) ?? { toolCalls: options.toolCalls ?? [{ name: 'speak', arguments: { sentence: options.sentence ?? 'Hello.' } }] };
        const calls = script.toolCalls ?? [];
        const args = calls.map((c) => JSON.stringify(c.arguments));
        const textTokens = tokensOf(script.text ?? '');
        const tokenCount = textTokens.length + args.reduce((n, a) => n + tokensOf(a).length, 0);
        const usage = options.usage ? options.usage(body) : { prompt_tokens: 100, completion_tokens: tokenCount, total_tokens: 100 + tokenCount };
        const base = { id: `chatcmpl-${requests.length}`, created: Math.floor(Date.now() / 1000), model: String(body.model ?? 'scripted') };
        let finished = false;
        res.on('close', () => {
          if (!finished) record.aborted = true;
        });
        if (!record.stream) {
          await sleep(firstTokenMs + gap * Math.max(0, tokenCount - 1));
          if (record.aborted) return;
          finished = true;
          record.tokensSent = tokenCount;
          const toolCalls = calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: { name: c.name, arguments: args[i] } }));
          res.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({
              ...base,
              object: 'chat.completion',
              choices: [
                {
                  index: 0,
                  message: { role: 'assistant', content: script.text ?? null, ...(toolCalls.length ? { tool_calls: toolCalls } : {}) },
                  finish_reason: toolCalls.length ? 'tool_calls' : 'stop',
                },
              ],
              usage,
            }),
          );
          return;
        }
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        const send = (choices: unknown[], extra: object = {}) => {
          if (!record.aborted) res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`);
        };
        await sleep(firstTokenMs);
        let first = true;
        const next = async () => {
          if (!first) await sleep(gap);
          first = false;
          record.tokensSent += 1;
        };
        for (const token of textTokens) {
          await next();
          if (record.aborted) return;
          send([{ index: 0, delta: { content: token }, finish_reason: null }]);
        }
        for (const [i, c] of calls.entries()) {
          for (const [k, token] of tokensOf(args[i]!).entries()) {
            await next();
            if (record.aborted) return;
            const fn = k === 0 ? { name: c.name, arguments: token } : { arguments: token };
            send([
              { index: 0, delta: { tool_calls: [{ index: i, ...(k === 0 ? { id: `call_${i}`, type: 'function' } : {}), function: fn }] }, finish_reason: null },
            ]);
          }
        }
        if (record.aborted) return;
        send([{ index: 0, delta: {}, finish_reason: calls.length ? 'tool_calls' : 'stop' }]);
        send([], { usage });
        finished = true;
        res.end('data: [DONE]\n\n');
      })();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  handle.baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  handle.close = () =>
    new Promise<void>((r) => {
      for (const t of timers) clearTimeout(t);
      server.closeAllConnections();
      server.close(() => r());
    });
  return handle;
}
