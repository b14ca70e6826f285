// The knowledge base index: passages by heading and paragraph, stems and synonyms, silence when nothing fits, incremental re-indexing, bad files skipped, a bad index rebuilt.
import t from 'tap';
import { mkdirSync, mkdtempSync, readFileSync, utimesSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chunkDocument } from '../../src/memory/chunk.js';
import { KnowledgeIndex } from '../../src/memory/knowledge.js';
import { loadSqlite } from '../../src/service/sqlite.js';
import type { KnowledgeSettings } from '../../src/config/memory.js';

const MUSEUM = join(import.meta.dirname, '..', 'fixtures', 'knowledge', 'museum');

function folder(files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), 'cortexd-kb-'));
  for (const [name, body] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), body);
  }
  return dir;
}

const settings = (root: string, more: Partial<KnowledgeSettings> = {}): KnowledgeSettings => ({
  name: 'test',
  root,
  topK: 3,
  minScore: 0.5,
  synonyms: [],
  maxFileBytes: 100_000,
  ...more,
});

t.test('a document is cut by heading and paragraph; each passage knows its headings', async (t) => {
  const chunks = chunkDocument(
    `# Hall\n\nIntro text that is long enough to stand alone as one paragraph of the hall, more than a hundred and sixty characters long, so it is not joined with the next.\n\n## Hours\nOpen at ten.\n\nClosed on Mondays.\n\n## Prices\nTickets cost 18 euros.\n`,
  );
  t.same(
    chunks.map((c) => c.heading),
    ['Hall', 'Hall > Hours', 'Hall > Prices'],
  );
  t.equal(chunks[1]!.text, 'Open at ten.\n\nClosed on Mondays.', 'short paragraphs under one heading are joined');
  const long = chunkDocument(`# Long\n\n${'A sentence of some words. '.repeat(100)}`);
  t.ok(long.length > 1 && long.every((c) => c.text.length <= 900), 'a long paragraph is split at sentence ends');
});

t.test('questions find the document that answers them, with stems and synonyms; a question nothing answers gets nothing', async (t) => {
  const state = mkdtempSync(join(tmpdir(), 'cortexd-kb-state-'));
  const index = new KnowledgeIndex(settings(MUSEUM), state);
  t.teardown(() => index.close());
  const report = index.sync();
  t.ok(report.files >= 40, `${report.files} documents indexed`);
  t.same(report.skipped, [], 'nothing skipped in the museum folder');

  const opening = index.query('When does the museum open on Sunday?');
  t.equal(opening[0]?.source, 'visiting/opening-hours.md', 'source is relative to the root');
  t.ok(opening[0]!.score >= 0.5 && opening[0]!.score <= 1, 'score is the share of the question covered');
  t.equal(index.query('Where is the restroom?')[0]?.source, 'services/toilets.md', 'restroom finds toilets through synonyms.txt');
  t.equal(index.query('Can I bring my pram?')[0]?.source, 'services/strollers.md', 'pram finds strollers');
  t.equal(index.query('How long is a planetarium show?')[0]?.source, 'halls/planetarium.md');
  t.same(index.query('Do you have a swimming pool?'), [], 'no passage for a question the documents do not answer');
  t.same(index.query('Is the Mona Lisa in this museum?'), [], 'a word every document has does not make noise relevant');
  t.same(index.query(''), [], 'nothing heard, nothing given');
});

t.test('synonyms from the configuration widen a question too', async (t) => {
  const root = folder({ 'a.md': '# Lift\n\nThe lift goes to every floor.', 'b.md': '# Shop\n\nThe shop sells books.' });
  const state = mkdtempSync(join(tmpdir(), 'cortexd-kb-state-'));
  const without = new KnowledgeIndex(settings(root), state);
  without.sync();
  t.same(without.query('is there an elevator'), [], 'elevator alone is not in the documents');
  without.close();
  const withSyn = new KnowledgeIndex(settings(root, { synonyms: [['lift', 'elevator']] }), state);
  t.teardown(() => withSyn.close());
  withSyn.sync();
  t.equal(withSyn.query('is there an elevator')[0]?.source, 'a.md');
  t.equal(withSyn.query('the lifts')[0]?.source, 'a.md', 'a plural finds the stem (Porter)');
});

t.test('a changed document is re-indexed and its old passage is gone; a removed one leaves the index', async (t) => {
  const root = folder({ 'hours.md': '# Hours\n\nThe museum opens at nine in the morning.', 'other.md': '# Other\n\nNothing about time.' });
  const state = mkdtempSync(join(tmpdir(), 'cortexd-kb-state-'));
  const index = new KnowledgeIndex(settings(root), state);
  t.teardown(() => index.close());
  t.same(index.sync().indexed.sort(), ['hours.md', 'other.md']);
  t.match(index.query('when does it open')[0], { source: 'hours.md', text: /nine/ });

  writeFileSync(join(root, 'hours.md'), '# Hours\n\nThe museum opens at eleven since the renovation.');
  utimesSync(join(root, 'hours.md'), new Date(), new Date(Date.now() + 5000));
  const again = index.sync();
  t.same(again.indexed, ['hours.md'], 'only the changed file is read again');
  const hits = index.query('when does it open');
  t.match(hits[0], { source: 'hours.md', text: /eleven/ });
  t.notOk(
    hits.some((h) => /nine/.test(h.text)),
    'the old passage is gone',
  );
  t.same(
    index.query('nine in the morning').filter((h) => /nine/.test(h.text)),
    [],
    'the old words find nothing',
  );

  rmSync(join(root, 'hours.md'));
  t.same(index.sync().removed, ['hours.md']);
  t.same(index.query('when does it open renovation'), []);

  // A restart with nothing changed reads no file.
  index.close();
  const reopened = new KnowledgeIndex(settings(root), state);
  t.same(reopened.sync().indexed, [], 'nothing re-read after a restart');
  reopened.close();
});

t.test('oversized, binary, PDF and unknown files are skipped with the reason; the rest is indexed', async (t) => {
  const root = folder({
    'good.md': '# Good\n\nThe guide robot knows the halls.',
    'big.md': `# Big\n\n${'word '.repeat(30_000)}`,
    'image.md': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d, 0x0a]),
    'latin1.txt': Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x20, 0xff, 0xfe]),
    'guide.pdf': '%PDF-1.4 not read',
    'photo.jpg': Buffer.from([0xff, 0xd8, 0xff]),
  });
  const state = mkdtempSync(join(tmpdir(), 'cortexd-kb-state-'));
  const index = new KnowledgeIndex(settings(root), state);
  t.teardown(() => index.close());
  const report = index.sync();
  t.same(report.indexed, ['good.md']);
  const why = Object.fromEntries(report.skipped.map((s) => [s.source, s.why]));
  t.match(why, {
    'big.md': /larger than 100000 bytes/,
    'image.md': /binary/,
    'latin1.txt': /binary/,
    'guide.pdf': /PDF/,
    'photo.jpg': /not a text document/,
  });
  t.equal(index.query('guide robot halls')[0]?.source, 'good.md');
});

t.test('a corrupt index file is rebuilt, never a crash', async (t) => {
  const root = folder({ 'a.md': '# A\n\nThe dinosaur hall is on the first floor.' });
  const state = mkdtempSync(join(tmpdir(), 'cortexd-kb-state-'));
  const first = new KnowledgeIndex(settings(root), state);
  first.sync();
  const file = first.file;
  first.close();
  writeFileSync(file, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4096, 0x5a)]));
  const index = new KnowledgeIndex(settings(root), state);
  t.teardown(() => index.close());
  t.match(index.recovered, /could not be used .*rebuilt/);
  t.same(index.sync().indexed, ['a.md'], 'everything is indexed again');
  t.equal(index.query('where is the dinosaur hall')[0]?.source, 'a.md');
  t.not(readFileSync(file).subarray(0, 16).toString(), '', 'the file is a database again');
});

t.test('an index another connection keeps locked is rebuilt, never a crash', async (t) => {
  const root = folder({ 'a.md': '# A\n\nThe whale skeleton hangs from the ceiling.' });
  const state = mkdtempSync(join(tmpdir(), 'cortexd-kb-state-'));
  const first = new KnowledgeIndex(settings(root), state);
  first.sync();
  const file = first.file;
  first.close();
  // Another holder of the file (a stuck process) keeps an exclusive lock on it.
  const Database = loadSqlite();
  const holder = new Database(file);
  holder.pragma('journal_mode = DELETE');
  holder.exec('BEGIN EXCLUSIVE');
  t.teardown(() => holder.open && holder.close());
  const index = new KnowledgeIndex(settings(root), state);
  t.teardown(() => index.close());
  t.match(index.recovered, /could not be used .*(locked|busy).*rebuilt/i);
  index.sync();
  t.equal(index.query('whale skeleton')[0]?.source, 'a.md');
});

t.test('a folder that cannot be read is a warning; the index keeps what it had', async (t) => {
  const root = folder({ 'a.md': '# A\n\nThe mineral room shows an amethyst geode.' });
  const state = mkdtempSync(join(tmpdir(), 'cortexd-kb-state-'));
  const index = new KnowledgeIndex(settings(root), state);
  t.teardown(() => index.close());
  index.sync();
  rmSync(root, { recursive: true });
  const report = index.sync();
  t.match(report.skipped, [{ source: root, why: /cannot be read \(the index is kept as it was\)/ }]);
  t.equal(report.skipped.length, 1, 'one warning');
  t.equal(index.query('amethyst geode')[0]?.source, 'a.md');
});
