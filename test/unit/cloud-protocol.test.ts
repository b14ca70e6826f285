// Proves the wire schemas accept the spec's messages, reject out-of-range requests, and classify final transcripts by the spec's rule.
import t from 'tap';
import {
  AsrClientMessageSchema,
  AsrServerMessageSchema,
  ChatCompletionChunkSchema,
  ChatCompletionRequestSchema,
  CreateKeyResponseSchema,
  isFinalTranscript,
  SpeechlabTtsRequestSchema,
  VlmClientMessageSchema,
} from '../../src/cloud/protocol.js';

const paths = (r: { success: boolean; error?: { issues: Array<{ path: PropertyKey[] }> } }) => r.error?.issues.map((i) => i.path.join('.')) ?? [];

t.test('chat request ranges and roles are enforced', async (t) => {
  const ok = ChatCompletionRequestSchema.safeParse({
    model: 'gen-4o',
    messages: [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'move', arguments: '{}' } }] },
      { role: 'tool', content: 'done', tool_call_id: 'c1' },
    ],
    temperature: 2,
    frequency_penalty: -2,
    presence_penalty: 2,
    tools: [{ type: 'function', function: { name: 'move', description: 'd', parameters: { type: 'object' } } }],
  });
  t.ok(ok.success);
  for (const [field, value] of [
    ['temperature', 2.01],
    ['temperature', -0.1],
    ['frequency_penalty', -2.5],
    ['presence_penalty', 2.1],
    ['max_tokens', 0],
    ['top_p', 1.5],
  ] as const) {
    const r = ChatCompletionRequestSchema.safeParse({ model: 'm', messages: [{ role: 'user', content: 'x' }], [field]: value });
    t.same(paths(r), [field], `${field}=${value} rejected`);
  }
  t.notOk(ChatCompletionRequestSchema.safeParse({ model: 'm', messages: [{ role: 'robot', content: 'x' }] }).success);
  t.notOk(ChatCompletionRequestSchema.safeParse({ model: 'm', messages: [] }).success, 'empty messages');
  t.notOk(ChatCompletionRequestSchema.safeParse({ model: 'm', messages: [{ role: 'assistant', content: null }] }).success);
});

t.test('stream chunk with usage and empty choices parses', async (t) => {
  const r = ChatCompletionChunkSchema.safeParse({
    id: 'x',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [],
    usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 },
  });
  t.ok(r.success);
});

t.test('ASR messages', async (t) => {
  t.ok(AsrClientMessageSchema.safeParse({ audio: 'AA==', rate: 22050, language_code: 'en' }).success);
  t.notOk(AsrClientMessageSchema.safeParse({ audio: 'AA==', rate: 12000 }).success, 'rate outside the set');
  t.ok(AsrClientMessageSchema.safeParse({ audio: 'AA==' }).success, 'later messages carry only audio');
  const committed = AsrServerMessageSchema.parse({ asr_reply: 'hello', clientId: 'c', time: 5 });
  t.ok(isFinalTranscript(committed));
  const partial = AsrServerMessageSchema.parse({ type: 'partial', asr_reply: 'hel', clientId: 'c', time: 5 });
  t.notOk(isFinalTranscript(partial));
  t.ok(AsrServerMessageSchema.safeParse({ type: 'connection', message: 'ok', clientId: 'c' }).success);
  t.ok(AsrServerMessageSchema.safeParse({ type: 'info', message: 'restarted', clientId: 'c' }).success);
  t.ok(AsrServerMessageSchema.safeParse({ type: 'error', message: 'boom', clientId: 'c' }).success);
  t.notOk(isFinalTranscript({ type: 'info', message: 'x' }), 'no asr_reply, not a transcript');
  t.ok(isFinalTranscript({ type: 'final', asr_reply: 'x' }), 'a type other than partial with asr_reply is final');
  t.notOk(isFinalTranscript('hello'));
});

t.test('TTS, vision and keys', async (t) => {
  t.notOk(SpeechlabTtsRequestSchema.safeParse({ input: 'hi', speed: 2.5 }).success);
  t.notOk(SpeechlabTtsRequestSchema.safeParse({ input: '' }).success);
  t.ok(SpeechlabTtsRequestSchema.safeParse({ input: 'hi', voice: { id: 'v' }, speed: 0.5 }).success);
  t.notOk(VlmClientMessageSchema.safeParse({ frame: 'abc' }).success, 'timestamp is required');
  const info = { id: 'k', user_id: 'u', name: 'api-key-1', prefix: 'key_test_', total_cost: 0, deleted: false, created_at: 'a', updated_at: 'b' };
  t.ok(CreateKeyResponseSchema.safeParse({ message: 'm', api_key: 'key_test_x', api_key_info: info }).success);
  t.notOk(CreateKeyResponseSchema.safeParse({ message: 'm', api_key: 'x', api_key_info: { ...info, prefix: 'sk_' } }).success);
});
