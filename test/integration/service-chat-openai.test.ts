// Proves the official openai client works against the offline rule-based model of `cortexd cloud`, streaming and not, with tool calls.
import t from 'tap';
import OpenAI from 'openai';
import { pino } from 'pino';
import { startService } from '../../src/service/index.js';
import { chatCostMicro } from '../../src/service/metering.js';

const tools = [
  {
    type: 'function' as const,
    function: {
      name: 'speak',
      description: 'Say something',
      parameters: { type: 'object', properties: { sentence: { type: 'string' } }, required: ['sentence'] },
    },
  },
  {
    type: 'function' as const,
    function: {
      name: 'move',
      parameters: { type: 'object', properties: { action: { type: 'string', enum: ['stand still', 'turn left', 'turn right', 'move forwards'] } } },
    },
  },
];

t.test('openai client against the rule-based model', async (t) => {
  const svc = await startService({ dbPath: ':memory:', jwtSecret: 'o'.repeat(40), logger: pino({ level: 'silent' }) });
  t.teardown(() => svc.close());
  const { apiKey, info } = svc.admin.createApiKey('robot');
  const client = new OpenAI({ apiKey, baseURL: `${svc.url}/api/core/provider_a`, maxRetries: 0 });

  t.test('plain text without tools', async (t) => {
    const r = await client.chat.completions.create({ model: 'gen-4o-mini', messages: [{ role: 'user', content: 'hello there' }] });
    t.equal(r.object, 'chat.completion');
    t.equal(r.choices[0]?.message.content, 'Hello! Nice to meet you.');
    t.equal(r.choices[0]?.finish_reason, 'stop');
    t.ok(r.usage && r.usage.prompt_tokens > 0 && r.usage.completion_tokens > 0);
    const row = svc.admin.usage(info.id).at(-1)!;
    t.equal(
      row.cost_micro,
      chatCostMicro({ input: 7000, output: 28000 }, r.usage!.prompt_tokens, r.usage!.completion_tokens),
      'charged at the gen-4o-mini price',
    );
  });

  t.test('speech in the prompt is answered with a speak tool call', async (t) => {
    const prompt = 'You are a robot.\n\nINPUT: Voice\n// START\nwhat is your name\n// END\n\nAVAILABLE ACTIONS: speak, move';
    const r = await client.chat.completions.create({
      model: 'gen-4o',
      messages: [
        { role: 'system', content: 'be nice' },
        { role: 'user', content: prompt },
      ],
      tools,
    });
    const call = r.choices[0]?.message.tool_calls?.[0];
    t.equal(r.choices[0]?.finish_reason, 'tool_calls');
    t.equal(call?.type === 'function' && call.function.name, 'speak');
    t.same(call?.type === 'function' && JSON.parse(call.function.arguments), { sentence: 'I am a robot running cortexd.' });
  });

  t.test('a movement command calls move with a value from its enum, and speaks', async (t) => {
    const r = await client.chat.completions.create({ model: 'gen-4o', messages: [{ role: 'user', content: 'Voice: please turn left now' }], tools });
    const calls = (r.choices[0]?.message.tool_calls ?? []).map((c) => (c.type === 'function' ? [c.function.name, JSON.parse(c.function.arguments)] : []));
    t.same(calls, [
      ['move', { action: 'turn left' }],
      ['speak', { sentence: 'Okay, turn left.' }],
    ]);
  });

  t.test('nothing heard: no tool calls (idle)', async (t) => {
    const r = await client.chat.completions.create({
      model: 'gen-4o',
      messages: [{ role: 'user', content: 'INPUT: Battery\n// START\n80%\n// END\nVision:\n\nnothing' }],
      tools,
    });
    t.equal(r.choices[0]?.message.tool_calls, undefined);
    t.equal(r.choices[0]?.finish_reason, 'stop');
  });

  t.test('streaming: chunks, tool call deltas, usage, [DONE]', async (t) => {
    const stream = await client.chat.completions.create({
      model: 'gen-4o',
      messages: [{ role: 'user', content: 'Voice: hello robot' }],
      tools,
      stream: true,
      stream_options: { include_usage: true },
    });
    const names: string[] = [];
    let args = '';
    let finish: string | null | undefined;
    let usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | undefined | null;
    for await (const chunk of stream) {
      for (const c of chunk.choices) {
        for (const tc of c.delta.tool_calls ?? []) {
          if (tc.function?.name) names.push(tc.function.name);
          args += tc.function?.arguments ?? '';
        }
        finish = c.finish_reason ?? finish;
      }
      if (chunk.usage) usage = chunk.usage;
    }
    t.same(names, ['speak']);
    t.same(JSON.parse(args), { sentence: 'Hello! Nice to meet you.' });
    t.equal(finish, 'tool_calls');
    t.ok(usage && usage.total_tokens === usage.prompt_tokens + usage.completion_tokens);
  });

  t.test('streaming text content', async (t) => {
    const stream = await client.chat.completions.create({ model: 'gen-4o', messages: [{ role: 'user', content: 'thanks a lot' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    t.equal(text, 'You are welcome.');
  });
});
