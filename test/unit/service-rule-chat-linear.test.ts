// Proves every pattern of the offline rule-based model runs in linear time: each against 1 MiB adversarial inputs, and whole requests of 1 MiB.
import t from 'tap';
import {
  ARG_PAIR_PATTERN,
  CALL_TOOL_PATTERN,
  MAX_UTTERANCE_CHARS,
  MOVE_RULES,
  SPEAK_RULES,
  VOICE_LINE_PATTERN,
  VOICE_WORDS,
} from '../../src/service/backends/chat-rules.js';
import { heardUtterance, moveMatches, ruleAnswer, voiceBlock } from '../../src/service/backends/rule-chat.js';
import type { ToolDefinition } from '../../src/cloud/protocol.js';

const MIB = 1024 * 1024;
/** `unit` repeated to 1 MiB, then `tail`. */
const fill = (unit: string, tail = ''): string => unit.repeat(Math.ceil(MIB / unit.length)).slice(0, MIB) + tail;

/**
 * Inputs that made the earlier patterns backtrack from every position: a word repeated with no
 * END, no colon or no closing context, runs of spaces, `use .. with` lines that end in a newline.
 */
const ADVERSARIAL: Record<string, string> = {
  'voice repeated (the reported 292 s freeze)': fill('voice'),
  'voice lines without START': fill('voice\n'),
  'voice + START blocks without END': fill('voice\n// START\nx\n'),
  'voice label without colon': fill('voice abcdefghij '),
  'go go go ... back': fill('go ', ' back'),
  'move walk go on many lines': fill('move walk go\n', 'back'),
  'use a with ... then a newline': fill('use a with ', '\n!'),
  'one long word': fill('a', '!'),
  'key=value start everywhere': fill('a=', ' "'),
  'open quotes': fill('a="b ', ''),
  'turn followed by spaces': `turn${' '.repeat(MIB)}x`,
  'good good good': fill('good '),
  'what what what': fill('what is your '),
};

/**
 * The bound of this test is not a speed target: a linear scan of 1 MiB takes milliseconds, the
 * quadratic patterns it replaces took minutes (292 s reported). 2 s separates the two on any machine.
 */
const BOUND_MS = 2000;

function timed(fn: () => unknown): number {
  const t0 = performance.now();
  fn();
  return performance.now() - t0;
}

t.test('each pattern of the rule model against 1 MiB adversarial inputs', async (t) => {
  const patterns: Array<[string, (s: string) => unknown]> = [
    ['VOICE_WORDS', (s) => VOICE_WORDS.test(s)],
    ['VOICE_LINE_PATTERN', (s) => VOICE_LINE_PATTERN.exec(s)],
    ['voiceBlock (START/END scanner)', (s) => voiceBlock(s)],
    ['CALL_TOOL_PATTERN', (s) => CALL_TOOL_PATTERN.exec(s)],
    ['ARG_PAIR_PATTERN', (s) => [...s.matchAll(ARG_PAIR_PATTERN)]],
    ...MOVE_RULES.map((r): [string, (s: string) => unknown] => [`MOVE_RULES.${r.name}`, (s) => moveMatches(r, s)]),
    ...SPEAK_RULES.map((r): [string, (s: string) => unknown] => [`SPEAK_RULES.${r.name}`, (s) => r.pattern.test(s)]),
  ];
  for (const [name, run] of patterns) {
    let worst = 0;
    let worstInput = '';
    for (const [label, input] of Object.entries(ADVERSARIAL)) {
      const ms = timed(() => run(input));
      if (ms > worst) [worst, worstInput] = [ms, label];
    }
    t.ok(worst < BOUND_MS, `${name}: slowest input "${worstInput}" took ${worst.toFixed(1)} ms`);
  }
});

t.test('a whole 1 MiB request through the model answers at once, with a bounded utterance', async (t) => {
  const speak: ToolDefinition = { type: 'function', function: { name: 'speak', parameters: { type: 'object', properties: { text: { type: 'string' } } } } };
  const move: ToolDefinition = {
    type: 'function',
    function: { name: 'move', parameters: { type: 'object', properties: { action: { enum: ['move forward', 'move back'] } } } },
  };
  for (const [label, input] of Object.entries(ADVERSARIAL)) {
    let answer: ReturnType<typeof ruleAnswer> | undefined;
    const ms = timed(() => (answer = ruleAnswer({ messages: [{ role: 'user', content: input }], tools: [speak, move] })));
    t.ok(ms < BOUND_MS, `${label}: ${ms.toFixed(1)} ms`);
    const said = answer!.toolCalls.map((c) => c.function.arguments).join('');
    t.ok(said.length < MAX_UTTERANCE_CHARS + 200, `${label}: the answer stays short (${said.length} characters)`);
  }
  // The behaviour the patterns had is kept: the block, a voice line, "go" unless "back" follows.
  t.equal(heardUtterance(`INPUT: Voice\n\n  // START\nhello there\n  // END\n${'x'.repeat(MIB)}`), 'hello there');
  t.equal(heardUtterance('voice\n// START\n\n// END\nVoice: stop'), 'stop', 'an empty block falls back to a voice line');
  const forward = MOVE_RULES.find((r) => r.name === 'forward')!;
  t.ok(moveMatches(forward, 'go back and then go'), 'the last go of a line has no back after it');
  t.notOk(moveMatches(forward, 'go go go back'), 'back after the last go cancels them all');
  t.ok(moveMatches(forward, 'go back\ngo'), 'lines are separate');
  t.same(CALL_TOOL_PATTERN.exec('please use echo with hello\nthere')?.slice(1), ['echo', 'hello\nthere']);
});
