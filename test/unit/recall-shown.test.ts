// What a turn recalled is shown: a terminal view line with sources and scores, WebSim's Recalled list state, and a replay that flags changed passages.
import t from 'tap';
import { TerminalView } from '../../cli/view.js';
import type { AgentEvent } from '../../src/cortex/events.js';
import { decisionsOf, diffDecisions } from '../../src/record/decisions.js';
import { initialState, reduce } from '../../src/websim/page/state.js';
import { operatorEvent } from '../../src/fleet/events.js';
import { recallBlock } from '../../src/memory/recall.js';

const recall = (used: Extract<AgentEvent, { type: 'recall' }>['used'], note?: string): Extract<AgentEvent, { type: 'recall' }> => ({
  type: 'recall',
  at: 1000,
  mode: 'guide',
  tick: 7,
  query: 'where can I get a coffee',
  used,
  ...(note ? { note } : {}),
});
const cafe = { kind: 'knowledge' as const, source: 'services/cafe.md', score: 1, text: 'The Lighthouse Café serves coffee.' };
const fact = { kind: 'fact' as const, source: 'memory:2', score: 0.61, text: 'I take my coffee black', person: 'Ada' };

t.test('the terminal view prints each passage and memory a turn got, with source and score; nothing for a turn given none', async (t) => {
  const lines: string[] = [];
  const v = new TerminalView({ color: false, write: (text) => lines.push(...text.split('\n').filter(Boolean)), facts: {} });
  v.render(recall([cafe, fact]));
  v.render(recall([]));
  v.render(recall([], 'MEMORY: you have just forgotten 2 things Ada told you, as they asked; tell them so.'));
  const text = lines.map((l) => l.replace(/^\d\d:\d\d:\d\d /, ''));
  t.same(text, [
    'recalled: services/cafe.md 1.00; fact of Ada "I take my coffee black" 0.61',
    'memory: you have just forgotten 2 things Ada told you, as they asked; tell them so.',
  ]);
});

t.test("WebSim keeps the last turn's recalled items for its Recalled list", async (t) => {
  const s = reduce(initialState('guide'), recall([cafe, fact]) as never);
  t.same(s.recall, {
    at: 1000,
    tick: 7,
    query: 'where can I get a coffee',
    used: [
      { kind: 'knowledge', source: 'services/cafe.md', score: 1, text: 'The Lighthouse Café serves coffee.' },
      { kind: 'fact', source: 'memory:2', score: 0.61, text: 'I take my coffee black', person: 'Ada' },
    ],
  });
});

t.test('replay compares the passages of each turn: a changed document is a changed decision; memories are not compared', async (t) => {
  const recorded = decisionsOf([recall([cafe, fact])]);
  t.same(
    recorded.map((d) => d.text),
    ['recall services/cafe.md 1.00'],
  );
  t.ok(diffDecisions(recorded, decisionsOf([recall([cafe])])).same, 'the same passage without the memory (a fresh state directory) is the same');
  const changed = decisionsOf([recall([{ ...cafe, source: 'services/shop.md', score: 0.44 }])]);
  t.notOk(diffDecisions(recorded, changed).same, 'another passage is flagged');
  t.notOk(diffDecisions(recorded, decisionsOf([recall([])])).same, 'no passage any more is flagged');
});

t.test('shared transcripts on the fleet channel carry prompts without the memories in them', async (t) => {
  const block = recallBlock(
    'museum',
    [{ source: 'services/cafe.md', heading: 'Café', text: 'The café serves coffee.', score: 1 }],
    [{ id: 2, kind: 'fact', person: 'Ada', text: 'I take my coffee black', created_at: '' }],
    'Ada',
  );
  const prompt = `You guide visitors.\n\n${block}\n\nAVAILABLE INPUTS:\nheard`;
  t.match(prompt, /Ada/);
  const shared = operatorEvent({ type: 'prompt', at: 1, mode: 'guide', tick: 1, prompt }, true) as { prompt: string };
  t.notMatch(shared.prompt, /Ada|coffee black/, 'neither the name nor the fact leaves the robot');
  t.match(shared.prompt, /KNOWLEDGE .*\n\[1\] services\/cafe\.md/, 'the passages of the documents do');
  t.match(shared.prompt, /\(memories kept on the robot\)/);
  t.equal(operatorEvent({ type: 'recall', at: 1, mode: 'guide', tick: 1, query: 'q', used: [] }, true), undefined, 'recall events stay on the robot');
});
