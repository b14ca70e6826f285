// OM1's knowledge base on the local index: its pickled passages (made by Python's own pickler) are read as data and answered from; a pickle that would build objects is refused by name; a v1.1 file finds its folder where OM1 does.
import t from 'tap';
import { cpSync, mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PickleError, pickledPassages, readPickle } from '../../src/memory/pickle.js';
import { KnowledgeIndex } from '../../src/memory/knowledge.js';
import { loadAs } from '../../src/compat/om1/load.js';
import { translateLlm } from '../../src/compat/om1/names.js';

const FIX = join(import.meta.dirname, '..', 'fixtures', 'knowledge', 'om1-pickle');
const V11 = join(import.meta.dirname, '..', 'fixtures', 'om1', 'v1.1', 'conversation.json5');
const read = (name: string) => readFileSync(join(FIX, name));

t.test("Python's pickles of protocols 0, 2, 4 and 5 are read as data", async (t) => {
  t.same(readPickle(read('knowledge_base/om/om.pkl')), [
    { text: 'OpenMind builds OM1, an open runtime for robots. Its headquarters are in San Francisco.', metadata: { source: 'about.md', chunk_id: 0 } },
    { text: 'The charging dock is in the lobby next to the reception desk.', metadata: { source: 'building.md', chunk_id: 1 } },
    { text: 'What does the robot eat?', metadata: { type: 'qa_pair', answer: 'It eats electricity from its charging dock.', chunk_id: 2, source: 'faq' } },
  ]);
  t.same(readPickle(read('qa-protocol2.pkl')), {
    questions: ['Where is the cafeteria?', 'When does the museum open?'],
    answers: ['On the second floor, above the lobby.', 'At ten in the morning, every day but Monday.'],
  });
  t.same(readPickle(read('list-protocol0.pkl')), [
    { text: 'café au lait', metadata: { source: 'menu', chunk_id: 7 } },
    12345678901234567890n,
    -3,
    1.5,
    null,
    true,
    [1, 2],
  ]);
  const five = readPickle(read('list-protocol5.pkl')) as unknown[];
  t.same(five[0], { text: 'x'.repeat(300), metadata: { source: 'long', chunk_id: 2 ** 40 } });
  t.same(five[1], Buffer.from('raw'));
  t.same(five[2], [1], 'a set is a list');
});

t.test('a pickle that builds a Python object, or a broken one, is refused with what it is', async (t) => {
  t.throws(() => readPickle(read('object.pkl')), { name: 'PickleError', message: /STACK_GLOBAL at byte \d+ builds a Python object/ });
  t.throws(
    () => readPickle(Buffer.from("cos\nsystem\n(S'echo hi'\ntR.", 'latin1')),
    { message: /GLOBAL os\.system at byte 0/ },
    'a protocol-0 call names the function',
  );
  const whole = read('qa-protocol2.pkl');
  t.throws(() => readPickle(whole.subarray(0, whole.length - 5)), { message: /cut short/ });
  t.throws(() => readPickle(Buffer.from([0x80, 0x04, 0xff])), { message: /unknown opcode 0xff at byte 2/ });
  t.throws(() => pickledPassages(Buffer.from('I5\n.', 'latin1')), PickleError, 'a number is not a document list');
  t.throws(() => pickledPassages(Buffer.from('(dp0\nVquestions\np1\n(lp2\nVa\np3\nas.', 'latin1')), { message: /needs lists 'questions' and 'answers'/ });
});

t.test("OM1's knowledge-base folder is indexed: its pickled passages answer questions, the vector index is skipped with why", async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-om1kb-'));
  const root = join(FIX, 'knowledge_base', 'om');
  const index = new KnowledgeIndex({ name: 'om', root, topK: 3, minScore: 0.3, synonyms: [], maxFileBytes: 100_000 }, state);
  t.teardown(() => index.close());
  const report = index.sync();
  t.same(report.indexed, ['om.pkl']);
  t.equal(report.chunks, 3);
  t.match(report.skipped, [{ source: 'om.faiss', why: /vector index.*\.pkl beside it/ }]);
  const dock = index.query('where is the reception desk');
  t.equal(dock[0]?.source, 'om.pkl');
  t.equal(dock[0]?.heading, 'building.md (chunk 1)');
  t.match(dock[0]?.text, /lobby next to the reception desk/);
  t.match(index.query('what does the robot eat')[0]?.text, /electricity/, 'a question-and-answer entry gives its answer');
  t.same(index.query('weather forecast for tomorrow'), [], 'nothing fits: no passage');
});

t.test("a v1.1 file's knowledge_base is OM1's folder beside config/; its base_url (the embedding server) is not called", async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'cortexd-om1home-'));
  mkdirSync(join(home, 'config'));
  cpSync(V11, join(home, 'config', 'conversation.json5'));
  // Without the folder: it loads, with a warning naming the folder (OM1 would not start).
  const without = await loadAs({ file: join(home, 'config', 'conversation.json5') }, { om1: true, simulate: true, env: {} });
  t.match(without.om1?.warnings, [new RegExp(`${home}/knowledge_base/om does not exist`)]);
  t.match(without.om1?.translations.join('\n'), /knowledge_base\.base_url: "\$\{KB_BASE_URL:-http:\/\/localhost:8100\}": OM1's embedding server is not called/);
  t.match(without.om1?.translations.join('\n'), /knowledge_base: "om" -> the folder OM1 reads, \.\.\/knowledge_base\/om/);
  // With it: no warning, and the loaded configuration's knowledge base is that folder.
  cpSync(join(FIX, 'knowledge_base'), join(home, 'knowledge_base'), { recursive: true });
  const withKb = await loadAs({ file: join(home, 'config', 'conversation.json5') }, { om1: true, simulate: true, env: {} });
  t.same(
    withKb.om1?.warnings.filter((w) => /knowledge_base/.test(w)),
    [],
  );
  t.match((withKb.loaded.config as { knowledge_base?: unknown }).knowledge_base, {
    knowledge_base_name: 'om',
    knowledge_base_root: '../knowledge_base/om',
    min_score: 0.6,
  });
});

t.test("RagMultiLLM's use_rag is OpenMind's hosted knowledge base unless the file has its own", async (t) => {
  const prefixes = () => ['gen-'];
  t.match(translateLlm('RagMultiLLM', { use_rag: true }, prefixes), { kind: 'unsupported', service: /api\.openmind\.org\/api\/core\/rag\/query/ });
  const local = translateLlm('RagMultiLLM', { use_rag: true }, prefixes, true);
  t.equal(local.kind, 'ok');
  t.match(local.kind === 'ok' ? local.notes[0] : '', /use_rag -> the file's knowledge_base/);
});
