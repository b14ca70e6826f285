// The fuser builds one prompt per tick in the documented order, hides excluded actions, and the offline rule model reads its input blocks.
import t from 'tap';
import { fuse, inputSection, promptActions, promptText } from '../../src/cortex/fuser.js';
import { heardUtterance, lastUserText, ruleAnswer } from '../../src/service/backends/rule-chat.js';
import type { ActionConfig } from '../../src/config/schema.js';

const config = { system_prompt_base: 'GLOBAL BASE', system_governance: 'GOVERNANCE: obey the laws', system_prompt_examples: 'If hello, say hello' };
const mode = { system_prompt_base: 'You are Pip in conversation mode.' };
const action = (name: string, label: string, exclude = false): ActionConfig =>
  ({ name, llm_label: label, connector: 'console', implementation: 'passthrough', config: {}, exclude_from_prompt: exclude }) as ActionConfig;

t.test('system message: mode base, governance, examples, then the actions not excluded', async (t) => {
  const acts = promptActions([action('speak', 'speak'), action('face', 'emotion'), action('move', 'move', true)], (a) => `does ${a.name}`);
  const p = fuse(config, mode, [], acts);
  const order = ['You are Pip in conversation mode.', 'GOVERNANCE', 'EXAMPLES:\nIf hello', 'AVAILABLE ACTIONS:', '- speak: does speak', '- emotion: does face'];
  let at = -1;
  for (const part of order) {
    const i = p.system.indexOf(part);
    t.ok(i > at, `"${part.slice(0, 20)}" comes in order`);
    at = i;
  }
  t.notMatch(p.system, /move/, 'exclude_from_prompt hides the action from the prompt');
  t.notMatch(p.system, /GLOBAL BASE/, "the mode's base replaces the global one");
  t.equal(p.messages.length, 2);
  t.equal(promptText(p), `${p.system}\n\n${p.user}`);
});

t.test('each input is one block; a buffer prefixed with its descriptor is not labelled twice', async (t) => {
  t.equal(inputSection({ descriptor: 'Voice', text: 'Voice: hello there' }), 'INPUT: Voice\n// START\nhello there\n// END');
  t.equal(inputSection({ descriptor: 'Vision', text: 'a person smiles' }), 'INPUT: Vision\n// START\na person smiles\n// END');
  const p = fuse(
    config,
    mode,
    [
      { descriptor: 'Vision', text: 'a cat' },
      { descriptor: 'Voice', text: 'Voice: hi' },
    ],
    [],
  );
  t.match(p.user, /AVAILABLE INPUTS:\nINPUT: Vision\n\/\/ START\na cat\n\/\/ END\nINPUT: Voice\n\/\/ START\nhi\n\/\/ END/);
  t.match(p.user, /What will you do\?/);
  const empty = fuse(config, mode, [{ descriptor: 'Voice', text: '   ' }], []);
  t.match(empty.user, /\(nothing new\)/, 'blank buffers are left out');
});

t.test('the offline rule model hears typed text labelled as voice, and nothing from vision alone', async (t) => {
  const typed = fuse(config, mode, [{ descriptor: 'Voice (typed)', text: 'Voice (typed): what is your name' }], []);
  t.equal(heardUtterance(lastUserText({ messages: typed.messages })), 'what is your name');
  const tools = [{ type: 'function' as const, function: { name: 'speak', parameters: { type: 'object', properties: { sentence: { type: 'string' } } } } }];
  const answer = ruleAnswer({ messages: typed.messages, tools });
  t.same(
    answer.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]),
    [['speak', { sentence: 'I am a robot running cortexd.' }]],
  );
  const vision = fuse(config, mode, [{ descriptor: 'Vision', text: 'a person giving a speech' }], []);
  t.equal(heardUtterance(lastUserText({ messages: vision.messages })), undefined, 'vision is not speech');
  t.same(ruleAnswer({ messages: vision.messages, tools }).toolCalls, [], 'so the model idles');
});
