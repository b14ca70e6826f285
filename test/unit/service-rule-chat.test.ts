// Proves the offline rule-based chat model: utterance extraction, intents to tool calls by the offered schemas, idling, explicit tool use.
import t from 'tap';
import { heardUtterance, ruleAnswer } from '../../src/service/backends/rule-chat.js';
import type { ToolDefinition } from '../../src/cloud/protocol.js';

const speak: ToolDefinition = { type: 'function', function: { name: 'speak', parameters: { type: 'object', properties: { sentence: { type: 'string' } } } } };
const move: ToolDefinition = {
  type: 'function',
  function: {
    name: 'move',
    parameters: { type: 'object', properties: { action: { type: 'string', enum: ['stand still', 'turn left', 'turn right', 'move forwards', 'move back'] } } },
  },
};
const face: ToolDefinition = {
  type: 'function',
  function: { name: 'face', parameters: { type: 'object', properties: { emotion: { enum: ['happy', 'sad', 'neutral'] } } } },
};
const weather: ToolDefinition = {
  type: 'function',
  function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' }, days: { type: 'number' } } } },
};

const ask = (content: string, tools?: ToolDefinition[]) => ruleAnswer({ messages: [{ role: 'user', content }], tools });
const calls = (a: ReturnType<typeof ruleAnswer>) => a.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]);

t.test('finding what was heard', async (t) => {
  t.equal(heardUtterance('INPUT: Voice\n// START\nhello there\n// END'), 'hello there');
  t.equal(heardUtterance('Some context\nVoice input: stop now\nBattery: 50%'), 'stop now');
  t.equal(heardUtterance('  just one line  '), 'just one line');
  t.equal(heardUtterance('two\nlines without a voice label'), undefined);
  t.equal(heardUtterance('INPUT: Battery\n// START\n80%\n// END\nmore'), undefined);
});

t.test('speech gets a speak call with a rule reply and a face', async (t) => {
  const a = ask('Voice: hello robot', [speak, move, face]);
  t.same(calls(a), [
    ['speak', { sentence: 'Hello! Nice to meet you.' }],
    ['face', { emotion: 'happy' }],
  ]);
  t.equal(a.content, null);
  t.same(a.rules, ['speak:greeting']);
});

t.test('unknown speech is echoed', async (t) => {
  t.same(calls(ask('Voice: the sky is blue', [speak])), [['speak', { sentence: 'I heard you say: the sky is blue' }]]);
});

t.test('movement picks the enum value of the intent and acknowledges', async (t) => {
  t.same(calls(ask('Voice: please turn right', [speak, move])), [
    ['move', { action: 'turn right' }],
    ['speak', { sentence: 'Okay, turn right.' }],
  ]);
  t.same(calls(ask('Voice: stop!', [move])), [['move', { action: 'stand still' }]]);
  t.same(calls(ask('Voice: go back', [move])), [['move', { action: 'move back' }]]);
  t.same(calls(ask('Voice: move', [move])), [['move', { action: 'move forwards' }]]);
});

t.test("the shipped move action's values (walk forward, walk back) are found for forward and back", async (t) => {
  const shipped = {
    type: 'function' as const,
    function: {
      name: 'move',
      parameters: { type: 'object', properties: { action: { type: 'string', enum: ['stand still', 'sit', 'walk forward', 'walk back', 'turn left'] } } },
    },
  };
  t.same(calls(ask('Voice: move forward', [shipped])), [['move', { action: 'walk forward' }]]);
  t.same(calls(ask('Voice: go back', [shipped])), [['move', { action: 'walk back' }]]);
});

t.test('a movement the tool cannot do is declined in speech', async (t) => {
  t.same(calls(ask('Voice: dance', [speak, move])), [['speak', { sentence: 'Sorry, I cannot dance.' }]]);
});

t.test('explicit tool use with JSON, key=value or text', async (t) => {
  t.same(calls(ask('Voice: use get_weather with {"city": "Paris"}', [speak, weather])), [['get_weather', { city: 'Paris' }]]);
  t.same(calls(ask('Voice: call get_weather tool with city=Oslo days=3', [weather])), [['get_weather', { city: 'Oslo', days: 3 }]]);
  t.same(calls(ask('Voice: run get_weather with Rome', [weather])), [['get_weather', { city: 'Rome' }]]);
  t.same(calls(ask('Voice: use unknown_tool with x', [speak])), [['speak', { sentence: 'I heard you say: use unknown_tool with x' }]]);
});

t.test('after tool results the request is answered, not repeated: the results are spoken', async (t) => {
  const messages = [
    { role: 'user' as const, content: 'Voice: use get_weather with city=Oslo' },
    {
      role: 'assistant' as const,
      content: null,
      tool_calls: [{ id: 'c1', type: 'function' as const, function: { name: 'get_weather', arguments: '{"city":"Oslo"}' } }],
    },
    { role: 'tool' as const, tool_call_id: 'c1', content: 'Sunny, 21 C' },
  ];
  const a = ruleAnswer({ messages, tools: [speak, weather] });
  t.same(calls(a), [['speak', { sentence: 'Here is what I found: Sunny, 21 C' }]], 'no second get_weather call');
  t.equal(ruleAnswer({ messages, tools: [weather] }).content, 'Here is what I found: Sunny, 21 C', 'as text without a speak tool');
});

t.test('nothing heard: idle, no calls', async (t) => {
  const a = ask('INPUT: Battery\n// START\n80%\n// END\nlots\nof\nlines', [speak, move]);
  t.same(a.toolCalls, []);
  t.same(a.rules, ['idle']);
});

t.test('no tools, or tool_choice none: text replies', async (t) => {
  t.equal(ask('how are you').content, 'I am fine, thank you.');
  t.equal(ruleAnswer({ messages: [{ role: 'user', content: 'hi' }], tools: [speak], tool_choice: 'none' }).content, 'Hello! Nice to meet you.');
  t.equal(ask('turn left').content, 'Okay, turn left.');
});

t.test('deterministic: the same request gives the same answer', async (t) => {
  t.same(ask('Voice: hello', [speak, face]), ask('Voice: hello', [speak, face]));
});

t.test("the robot's name: 'Your name is X' in the system prompt is what it answers to 'what is your name'", async (t) => {
  const named = (system: string) =>
    calls(
      ruleAnswer({
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'Voice: what is your name' },
        ],
        tools: [speak],
      }),
    );
  t.same(named('Your name is Robo. You are a small friendly companion robot.'), [['speak', { sentence: 'My name is Robo.' }]]);
  t.same(
    named('You are a smart, curious, and friendly dog. Your name is Spot. When you hear something, react.'),
    [['speak', { sentence: 'My name is Spot.' }]],
    "OM1's idiom",
  );
  t.same(named('You are a robot.'), [['speak', { sentence: 'I am a robot running cortexd.' }]], 'no name given: the plain answer');
  t.same(
    calls(ruleAnswer({ messages: [{ role: 'user', content: 'Your name is Eve.\nVoice: what is your name' }], tools: [speak] })),
    [['speak', { sentence: 'I am a robot running cortexd.' }]],
    'only the system prompt names the robot, not what someone says',
  );
});
