// Proves the chat SSE consumer yields the same deltas and usage however the bytes are split, and fails loudly on broken streams.
import t from 'tap';
import { CloudProtocolError, CloudStreamError } from '../../src/cloud/errors.js';
import { collectChatStream, parseChatStream, type ChatStreamEvent } from '../../src/cloud/sse.js';

const chunk = (delta: object, finish: string | null = null, extra: object = {}) => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'gen-4o',
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...extra,
});
const usageChunk = {
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1700000000,
  model: 'gen-4o',
  choices: [],
  usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 },
};

const EVENTS = [
  chunk({ role: 'assistant', content: '' }),
  chunk({ content: 'Héllo ' }),
  chunk({ content: 'wörld 🤖' }),
  chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'move', arguments: '{"dir' } }] }),
  chunk({ tool_calls: [{ index: 0, function: { arguments: '":"left"}' } }] }),
  chunk({}, 'tool_calls'),
  usageChunk,
];
const BODY = EVENTS.map((e) => `data: ${JSON.stringify(e)}\n\n`).join('') + ': keep-alive comment\n\ndata: [DONE]\n\n';

/** A body that delivers `bytes` in pieces cut at `cuts` (byte offsets), as a server's TCP segments might. */
function split(text: string, cuts: number[]): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  const edges = [0, ...cuts.filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b), bytes.length];
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i >= edges.length - 1) return controller.close();
      controller.enqueue(bytes.slice(edges[i], edges[i + 1]));
      i++;
    },
  });
}

async function all(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const out: ChatStreamEvent[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

t.test('same result for every split, including mid-line and mid-UTF-8', async (t) => {
  const whole = await collectChatStream(parseChatStream(split(BODY, []), 'POST /x'));
  t.equal(whole.content, 'Héllo wörld 🤖');
  t.same(whole.toolCalls, [{ id: 'call_1', type: 'function', function: { name: 'move', arguments: '{"dir":"left"}' } }]);
  t.equal(whole.finishReason, 'tool_calls');
  t.same(whole.usage, { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
  const len = new TextEncoder().encode(BODY).length;
  const emoji = new TextEncoder().encode(BODY.slice(0, BODY.indexOf('🤖'))).length;
  const splits: number[][] = [
    [1],
    [5],
    [6],
    [emoji + 1],
    [emoji + 2, emoji + 3],
    [BODY.indexOf('\n\n') + 1],
    Array.from({ length: len }, (_, k) => k), // one byte at a time
    Array.from({ length: 40 }, (_, k) => Math.floor((k * len) / 40) + 3),
  ];
  for (const cuts of splits) {
    const got = await collectChatStream(parseChatStream(split(BODY, cuts), 'POST /x'));
    t.same(got, whole, `cuts ${cuts.length > 5 ? `${cuts.length} pieces` : cuts.join(',')}`);
  }
});

t.test('events arrive in order with usage last', async (t) => {
  const evs = await all(parseChatStream(split(BODY, [17, 99]), 'POST /x'));
  t.equal(evs.at(-1)?.kind, 'usage');
  t.same(
    evs.filter((e) => e.kind === 'delta' && e.content).map((e) => (e as { content: string }).content),
    ['Héllo ', 'wörld 🤖'],
  );
});

t.test('a body that ends before [DONE] is a stream error', async (t) => {
  const cut = BODY.slice(0, BODY.indexOf('data: [DONE]'));
  await t.rejects(all(parseChatStream(split(cut, [30]), 'POST /x')), CloudStreamError);
});

t.test('an error event mid-stream carries the server text', async (t) => {
  const body = `data: ${JSON.stringify(EVENTS[1])}\n\ndata: {"error":"Failed to read response body"}\n\n`;
  const seen: string[] = [];
  await t.rejects(
    collectChatStream(parseChatStream(split(body, [9]), 'POST /x'), (s) => seen.push(s)),
    { name: 'ModelProviderError', message: /Failed to read response body/ },
  );
  t.same(seen, ['Héllo '], 'text before the error was delivered');
});

t.test('a non-JSON or malformed event is a protocol error', async (t) => {
  await t.rejects(all(parseChatStream(split('data: nope\n\n', []), 'POST /x')), CloudProtocolError);
  await t.rejects(all(parseChatStream(split('data: {"id":1}\n\n', []), 'POST /x')), CloudProtocolError);
});

t.test('a body that errors is a stream error; abort surfaces the abort reason', async (t) => {
  let ctl!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (ctl = c) });
  const it = parseChatStream(body, 'POST /x');
  ctl.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(EVENTS[1])}\n\n`));
  const first = await it.next();
  t.equal((first.value as { content?: string }).content, 'Héllo ');
  ctl.error(new TypeError('terminated'));
  await t.rejects(it.next(), CloudStreamError);

  const ac = new AbortController();
  let ctl2!: ReadableStreamDefaultController<Uint8Array>;
  const body2 = new ReadableStream<Uint8Array>({ start: (c) => void (ctl2 = c) });
  const it2 = parseChatStream(body2, 'POST /x', ac.signal);
  ctl2.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(EVENTS[1])}\n\n`));
  await it2.next();
  const pending = it2.next();
  ac.abort(new Error('stopped by test'));
  ctl2.error(ac.signal.reason);
  await t.rejects(pending, { message: 'stopped by test' });
});

t.test('leaving the loop early cancels the body', async (t) => {
  let cancelled = false;
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(enc.encode(`data: ${JSON.stringify(EVENTS[1])}\n\ndata: ${JSON.stringify(EVENTS[2])}\n\n`));
    },
    cancel() {
      cancelled = true;
    },
  });
  for await (const ev of parseChatStream(body, 'POST /x')) {
    t.equal(ev.kind, 'delta');
    break;
  }
  t.ok(cancelled);
});

t.test('what is truly broken is still refused: the reader names it', async (t) => {
  const run = (text: string) => all(parseChatStream(split(text, []), 'POST /x'));
  await t.rejects(run('data: {"choices":{"0":{}}}\n\n'), { name: 'CloudProtocolError', message: /choices is not a list/ });
  await t.rejects(run('data: [1,2]\n\n'), { name: 'CloudProtocolError', message: /not an object/ });
  await t.rejects(run('data: {"choices":[{"delta":{"tool_calls":{"a":1}}}]}\n\n'), { name: 'CloudProtocolError', message: /tool_calls is not a list/ });
  await t.rejects(run('data: {"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"{}"}}]}}]}\n\ndata: [DONE]\n\n'), {
    name: 'CloudProtocolError',
    message: /arguments but never a name/,
  });
  await t.rejects(run('event: error\ndata: {"detail":"upstream overloaded"}\n\n'), { name: 'ModelProviderError', message: /upstream overloaded/ });
  await t.rejects(run('data: {"object":"error","message":"max_model_len exceeded","code":400}\n\n'), {
    name: 'ModelProviderError',
    message: /\(400\): max_model_len exceeded/,
  });
});

t.test('tool-call deltas are placed without index: by id, by provider index, by a new name after a complete call', async (t) => {
  const d = (tool_calls: object[], finish: string | null = null) =>
    `data: ${JSON.stringify({ choices: [{ delta: { tool_calls }, finish_reason: finish }] })}\n\n`;
  const body =
    d([{ id: 'a', function: { name: 'move', arguments: '{"action":' } }]) +
    d([{ function: { arguments: '"sit"}' } }]) +
    d([{ function: { name: 'speak', arguments: '{"sentence":"hi"}' } }]) +
    d([{ index: 0, id: 'c', function: { name: 'face', arguments: '' } }]) +
    d([{ index: 0, id: '', function: { arguments: '{"emotion":"happy"}' } }], 'stop') +
    'data: [DONE]\n\n';
  const got = await collectChatStream(parseChatStream(split(body, []), 'POST /x'));
  t.same(
    got.toolCalls.map((c) => [c.id, c.function.name, c.function.arguments]),
    [
      ['a', 'move', '{"action":"sit"}'],
      ['', 'speak', '{"sentence":"hi"}'],
      ['c', 'face', '{"emotion":"happy"}'],
    ],
  );
});
