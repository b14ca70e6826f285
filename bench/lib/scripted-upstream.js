// An OpenAI-compatible chat upstream on loopback that answers every request with one scripted tool call, at a chosen first-token delay and token rate.
import { createServer } from 'node:http';

/**
 * Starts the upstream. Every chat request gets a `speak` tool call with `sentence` (or `toolCalls`,
 * a list of {name, arguments}), whose arguments JSON is cut into tokens of `charsPerToken` characters:
 * streamed (`stream: true`) the first token comes `firstTokenMs` after the request and one more every
 * 1000 / `tokensPerSecond` ms; not streamed, the whole answer comes when the last token would have.
 * `requests` records each request's arrival time and whether it streamed.
 */
export async function startScriptedUpstream({ sentence, toolCalls, firstTokenMs = 300, tokensPerSecond = 40, charsPerToken = 4 } = {}) {
  const calls = toolCalls ?? [{ name: 'speak', arguments: { sentence } }];
  const requests = [];
  const timers = new Set();
  const sleep = (ms) => new Promise((r) => { const t = setTimeout(() => (timers.delete(t), r()), ms); timers.add(t); });
  const tokensOf = (text) => text.match(new RegExp(`[\\s\\S]{1,${charsPerToken}}`, 'g')) ?? [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', async () => {
      const request = JSON.parse(body);
      requests.push({ at: Date.now(), stream: Boolean(request.stream) });
      const base = { id: `chatcmpl-${requests.length}`, created: Math.floor(Date.now() / 1000), model: request.model };
      const args = calls.map((c) => JSON.stringify(c.arguments));
      const tokenCount = args.reduce((n, a) => n + tokensOf(a).length, 0);
      const usage = { prompt_tokens: 100, completion_tokens: tokenCount, total_tokens: 100 + tokenCount };
      const gap = 1000 / tokensPerSecond;
      let closed = false;
      res.on('close', () => (closed = true));
      if (!request.stream) {
        await sleep(firstTokenMs + gap * (tokenCount - 1));
        if (closed) return;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            ...base,
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: null, tool_calls: calls.map((c, i) => ({ id: `call_${i}`, type: 'function', function: { name: c.name, arguments: args[i] } })) }, finish_reason: 'tool_calls' }],
            usage,
          }),
        );
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const send = (choices, extra = {}) => !closed && res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`);
      await sleep(firstTokenMs);
      let first = true;
      for (const [i, c] of calls.entries()) {
        const tokens = tokensOf(args[i]);
        for (const [k, token] of tokens.entries()) {
          if (closed) return;
          if (!first) await sleep(gap);
          first = false;
          const fn = k === 0 ? { name: c.name, arguments: token } : { arguments: token };
          send([{ index: 0, delta: { ...(k === 0 && i === 0 ? { role: 'assistant' } : {}), tool_calls: [{ index: i, ...(k === 0 ? { id: `call_${i}`, type: 'function' } : {}), function: fn }] }, finish_reason: null }]);
        }
      }
      send([{ index: 0, delta: {}, finish_reason: 'tool_calls' }]);
      send([], { usage });
      if (!closed) res.end('data: [DONE]\n\n');
    });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return {
    baseUrl: `http://127.0.0.1:${server.address().port}/v1`,
    requests,
    close: () =>
      new Promise((r) => {
        for (const t of timers) clearTimeout(t);
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
