// The memory: facts read from what people say, kept in a private SQLite file, found again by what is heard, bounded, and forgotten for good on request.
import t from 'tap';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readHeard } from '../../src/memory/facts.js';
import { MemoryStore, memoryFileOf } from '../../src/memory/memories.js';
import { Recall } from '../../src/memory/recall.js';
import { createLogger } from '../../src/log.js';
import { ruleAnswer } from '../../src/service/backends/rule-chat.js';
import type { LoadedConfig } from '../../src/config/schema.js';

const logger = createLogger({ level: 'silent' });

/** Every byte of the store's files (database, write-ahead log, shared memory), as latin1 text to search. */
const onDisk = (file: string) =>
  ['', '-wal', '-shm', '-journal']
    .map((s) => file + s)
    .filter(existsSync)
    .map((f) => readFileSync(f).toString('latin1'))
    .join('');

t.test('what people say about themselves is read as facts; questions, requests and talk about the robot are not', async (t) => {
  t.match(readHeard('Hello, my name is Ada.'), { name: 'Ada', forget: false });
  t.match(readHeard('call me Ada Lovelace'), { name: 'Ada Lovelace' });
  t.match(readHeard('call me ada'), { name: 'Ada' }, 'a name heard in lower case is capitalised');
  t.same(readHeard('Hi, my name is Bo and I collect fossils').facts, ['I collect fossils'], 'a greeting and the name are not facts');
  t.same(readHeard('I take my coffee black.').facts, ['I take my coffee black']);
  t.same(readHeard('My daughter is called Lin and I live in Aarhus').facts, ['My daughter is called Lin', 'I live in Aarhus']);
  t.same(readHeard('What is my name?').facts, [], 'a question is not a fact');
  t.same(readHeard('Do you know where the café is?').facts, []);
  t.same(readHeard('I want you to move forward').facts, [], 'a request to the robot is not a fact');
  t.same(readHeard('hello').facts, []);
  t.equal(readHeard('Please forget what I told you').forget, true);
  t.equal(readHeard('forget everything I said').forget, true);
  t.equal(readHeard('forget me').forget, true);
  t.equal(readHeard('I forgot my umbrella').forget, false);
  t.match(readHeard('Hi, I am Bo. I collect fossil teeth.'), { name: 'Bo', facts: ['I collect fossil teeth'] }, '"I am Bo" gives a name');
  t.equal(readHeard("I'm hungry").name, undefined, 'a lower-case word after "I\'m" is not a name');
  t.equal(readHeard('my name is not important').name, undefined);
});

t.test('a memory store is private, finds facts by what is heard, and forgets them from the index and the file', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-mem-'));
  const file = memoryFileOf(state, 'museum');
  const store = new MemoryStore(file, 100);
  t.teardown(() => store.close());
  t.equal(statSync(file).mode & 0o777, 0o600, 'the file is 0600');
  const name = store.add('fact', 'Ada', 'my name is Ada');
  const coffee = store.add('fact', 'Ada', 'I take my coffee black');
  store.add('fact', 'Bo', 'I collect fossil teeth');
  t.equal(store.add('fact', 'Ada', 'I take my coffee  black'), coffee, 'the same fact again is one memory');
  t.match(store.find('how do I take my coffee?', { topK: 3, minScore: 0.3 }), [{ id: coffee, person: 'Ada', kind: 'fact' }]);
  t.match(store.find('what is my name', { topK: 3, minScore: 0.3 })[0], { id: name });
  t.same(store.find('where is the planetarium', { topK: 3, minScore: 0.3 }), [], 'nothing remembered about it, nothing given');
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  t.match(onDisk(file), /coffee black/, 'the fact is on disk before forget');

  t.equal(store.forgetPerson('ada'), 2, "forget --person removes all of Ada's memories (case-insensitive)");
  t.same(store.find('coffee', { topK: 3, minScore: 0 }), [], 'gone from the index');
  t.notMatch(onDisk(file), /coffee black/, 'gone from the file (and its log)');
  t.notMatch(onDisk(file), /my name is Ada/);
  t.equal(store.list().length, 1, "Bo's fact stays");
  t.equal(store.forget([store.list()[0]!.id]), 1, 'forget by id');
  t.notMatch(onDisk(file), /fossil teeth/);
});

t.test('the store is bounded: the oldest summaries go first, then the oldest facts', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-mem-'));
  const store = new MemoryStore(memoryFileOf(state, 'x'), 10);
  t.teardown(() => store.close());
  const t0 = Date.parse('2026-01-01T00:00:00Z');
  store.add('summary', '', 'an old conversation about the whale', new Date(t0));
  for (let i = 0; i < 12; i++) store.add('fact', `P${i}`, `I like exhibit number ${i}`, new Date(t0 + (i + 1) * 1000));
  const kept = store.list();
  t.equal(kept.length, 10);
  t.notOk(
    kept.some((m) => m.kind === 'summary'),
    'the summary went first',
  );
  t.same(
    kept.map((m) => m.person),
    ['P2', 'P3', 'P4', 'P5', 'P6', 'P7', 'P8', 'P9', 'P10', 'P11'],
    'then the oldest facts',
  );
});

t.test('a corrupt memory file is moved aside for a person to look at, and a new one started', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-mem-'));
  const file = memoryFileOf(state, 'x');
  new MemoryStore(file, 10).close();
  writeFileSync(file, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(2048, 0x41)]));
  const store = new MemoryStore(file, 10);
  t.teardown(() => store.close());
  t.match(store.recovered, /moved to .*\.bad-/);
  t.ok(
    readdirSync(join(state, 'memory')).some((f) => f.includes('.bad-')),
    'the bad file is kept',
  );
  store.add('fact', 'Ada', 'I take my coffee black');
  t.equal(store.size, 1);
});

t.test('Recall: a turn gets the facts told before, with the speaker named; "forget what I told you" forgets them', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-recall-'));
  const loaded = {
    file: join(state, 'robot.json5'),
    configName: 'robot',
    config: { memory: { enabled: true, max_memories: 100, top_k: 3, min_score: 0.3, summarize: true, conversation_gap_seconds: 60 } },
  } as unknown as LoadedConfig;
  const recall = Recall.of({ loaded, stateDir: state, logger })!;
  recall.start();
  t.same(recall.turn('Hi, my name is Ada and I take my coffee black.').used, [], 'nothing remembered yet');
  const summaries: string[] = [];
  const next = recall.turn('How do I like my coffee?', async (_instruction, text) => (summaries.push(text), 'Ada came by and talked about coffee.'));
  t.match(next.block, /SPEAKER: .*Ada/);
  t.match(next.block, /Ada told you: I take my coffee black/);
  t.match(next.used, [{ kind: 'fact', person: 'Ada', source: /^memory:\d+$/ }]);
  recall.said('You take it black.');
  await recall.endConversation();
  t.match(summaries[0], /Visitor: How do I like my coffee\?\nRobot: You take it black\./, 'the summary is asked with the transcript');
  t.match(recall.memory!.list({ kind: 'summary' }), [{ person: 'Ada', text: 'Ada came by and talked about coffee.' }]);

  recall.turn('my name is Ada');
  const forgot = recall.turn('Please forget what I told you');
  t.match(forgot.block, /forgotten 3 things Ada told you/);
  t.same(recall.memory!.list({ person: 'Ada' }), []);
  await recall.close();
});

t.test("the local service's rule-based model answers a summary request with the conversation's first lines", async (t) => {
  const answer = ruleAnswer({
    messages: [
      { role: 'system', content: 'Summarise this conversation between a robot and a visitor.' },
      { role: 'user', content: 'Visitor: my name is Ada\nRobot: Hello Ada!\nVisitor: where is the café?\nRobot: On the ground floor.' },
    ],
    tools: [],
  });
  t.equal(answer.content, 'Visitor: my name is Ada Robot: Hello Ada! Visitor: where is the café?');
});

t.test('places the robot saved (remember_locations) are memories too, read again when the file changes', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-recall-'));
  const loaded = {
    file: join(state, 'robot.json5'),
    configName: 'robot',
    config: { memory: { enabled: true, max_memories: 100, top_k: 3, min_score: 0.3, summarize: false, conversation_gap_seconds: 60 } },
  } as unknown as LoadedConfig;
  const places = (locations: Record<string, unknown>) => writeFileSync(join(state, 'locations.json'), JSON.stringify({ version: 1, locations }));
  places({ kitchen: { lat: 48.1173, lon: 11.516667, saved_at: '2026-01-01T00:00:00Z' } });
  const recall = Recall.of({ loaded, stateDir: state, logger })!;
  t.teardown(() => recall.close());
  t.match(recall.turn('where is the kitchen?').used, [{ kind: 'place', text: /^kitchen \(latitude 48\.117300, longitude 11\.516667\)$/ }]);
  places({ kitchen: { lat: 48.1173, lon: 11.516667, saved_at: 'x' }, 'charging dock': { lat: 48.2, lon: 11.6, saved_at: 'y' } });
  t.match(recall.turn('take me to the charging dock').used, [{ kind: 'place', text: /^charging dock/ }], 'a place saved since is found');
});
