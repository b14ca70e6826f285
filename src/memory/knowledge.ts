// The knowledge base: a folder of documents indexed in SQLite FTS5 (Porter stems, BM25) in the state directory, re-indexed file by file when they change.
import { createHash } from 'node:crypto';
import { type Dirent, readdirSync, readFileSync, rmSync, statSync, type Stats } from 'node:fs';
import type BetterSqlite3 from 'better-sqlite3';
import { extname, join, relative, sep } from 'node:path';
import type { KnowledgeSettings } from '../config/memory.js';
import { describeError } from '../errors.js';
import { chunkDocument, titleOf } from './chunk.js';
import { type Db, openDb } from './db.js';
import { queryTerms, Synonyms } from './query.js';
import { FtsSearch } from './search.js';
import { pickledPassages } from './pickle.js';

/** Bump when the tables or the tokenizer change: an index of another version is rebuilt. */
const SCHEMA_VERSION = '1';
/** Documents the index reads. */
export const TEXT_EXTENSIONS = new Set(['.md', '.markdown', '.txt', '.text']);
/** Pickled document lists (`NAME.pkl`, as OM1's knowledge bases keep their texts): read as data, never run. */
export const PICKLE_EXTENSION = '.pkl';
/** The file in the root that lists synonym groups (not a document). */
export const SYNONYMS_FILE = 'synonyms.txt';
/** Most files looked at under one root (a root pointed at `/` by mistake stops here, with a warning). */
const MAX_FILES = 20_000;

/** A passage given to a turn or printed by `knowledge query`: `source` relative to the root. */
export interface Passage {
  source: string;
  heading: string;
  text: string;
  score: number;
}

/** What one sync did. */
export interface SyncReport {
  files: number;
  indexed: string[];
  removed: string[];
  skipped: Array<{ source: string; why: string }>;
  chunks: number;
  ms: number;
}

function setup(db: Db): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ms INTEGER NOT NULL, size INTEGER NOT NULL, sha256 TEXT NOT NULL, chunks INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS passages (id INTEGER PRIMARY KEY, path TEXT NOT NULL, title TEXT NOT NULL, heading TEXT NOT NULL, text TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS passages_path ON passages(path);
    CREATE VIRTUAL TABLE IF NOT EXISTS passage_fts USING fts5(title, heading, text, content='passages', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
    CREATE TRIGGER IF NOT EXISTS passages_ai AFTER INSERT ON passages BEGIN
      INSERT INTO passage_fts(rowid, title, heading, text) VALUES (new.id, new.title, new.heading, new.text);
    END;
    CREATE TRIGGER IF NOT EXISTS passages_ad AFTER DELETE ON passages BEGIN
      INSERT INTO passage_fts(passage_fts, rowid, title, heading, text) VALUES ('delete', old.id, old.title, old.heading, old.text);
    END;
  `);
}

/** Why a file is not read, or undefined when it is a text document of a fitting size. */
function unreadable(file: string, st: Stats, maxBytes: number): string | undefined {
  if (st.size > maxBytes) return `larger than ${maxBytes} bytes (${st.size}); raise knowledge_base.max_file_bytes to index it`;
  const ext = extname(file).toLowerCase();
  if (ext === '.pdf') return 'PDF is not read by this runtime: convert it to text or Markdown (e.g. pdftotext)';
  if (ext === '.faiss') return 'a vector index of embeddings: passages are found by their words here (its texts are in the .pkl beside it)';
  if (!TEXT_EXTENSIONS.has(ext) && ext !== PICKLE_EXTENSION)
    return `not a text document (${ext || 'no extension'}); the index reads ${[...TEXT_EXTENSIONS, PICKLE_EXTENSION].join(' ')}`;
  return undefined;
}

/** True when the bytes are not UTF-8 text (a NUL byte, or invalid UTF-8). */
export function isBinary(bytes: Buffer): boolean {
  if (bytes.subarray(0, 8192).includes(0)) return true;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return false;
  } catch {
    return true;
  }
}

/** SQLite errors after which the index file is replaced (it is derived data: the documents are the truth). */
const BAD_FILE = /^SQLITE_(BUSY|LOCKED|CORRUPT|NOTADB|IOERR)/;

/** A document's title and passages: an OM1 pickle's document list, or text chunked by heading and paragraph; or why it is skipped. */
function documentOf(rel: string, bytes: Buffer): { title: string; chunks: Array<{ heading: string; text: string }> } | { why: string } {
  if (extname(rel).toLowerCase() === PICKLE_EXTENSION) {
    try {
      return { title: titleOf(rel, ''), chunks: pickledPassages(bytes).filter((c) => c.text.trim()) };
    } catch (err) {
      return { why: `not a pickled document list: ${describeError(err)}` };
    }
  }
  if (isBinary(bytes)) return { why: 'binary, not UTF-8 text' };
  const text = bytes.toString('utf8');
  return { title: titleOf(rel, text), chunks: chunkDocument(text) };
}

/** The index of one knowledge base (`<state dir>/knowledge/<name>.sqlite`). Owned by whoever opened it: `close()` it. */
export class KnowledgeIndex {
  readonly file: string;
  /** Why the file on disk was replaced (at open, or when a sync met a locked or corrupt file), if it was. */
  recovered: string | undefined;
  private conn!: Db;
  private search!: FtsSearch;
  private rowStmt!: BetterSqlite3.Statement;
  private synonyms: Synonyms;

  constructor(
    readonly settings: KnowledgeSettings,
    stateDir: string,
  ) {
    this.file = join(stateDir, 'knowledge', `${encodeURIComponent(settings.name)}.sqlite`);
    this.synonyms = new Synonyms(settings.synonyms);
    this.open(false);
  }

  get db(): Db {
    return this.conn;
  }

  private open(replace: boolean, why?: string): void {
    if (replace) {
      this.conn?.close();
      for (const f of [this.file, `${this.file}-wal`, `${this.file}-shm`, `${this.file}-journal`]) rmSync(f, { force: true });
    }
    const opened = openDb(this.file, setup, 'rebuild');
    this.conn = opened.db;
    this.recovered = replace ? `${this.file} could not be used (${why}); rebuilt` : opened.recovered;
    const meta = this.conn.prepare('SELECT value FROM meta WHERE key = ?').pluck();
    if (meta.get('schema') !== SCHEMA_VERSION || meta.get('root') !== this.settings.root) this.clear();
    this.search = new FtsSearch(this.conn, 'passage_fts', '3.0, 2.0, 1.0');
    this.rowStmt = this.conn.prepare('SELECT path, heading, text FROM passages WHERE id = ?');
  }

  private clear(): void {
    this.conn.exec('DELETE FROM passages; DELETE FROM files; DELETE FROM meta;');
    this.conn.exec("INSERT INTO passage_fts(passage_fts) VALUES('rebuild')");
    const put = this.conn.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
    put.run('schema', SCHEMA_VERSION);
    put.run('root', this.settings.root);
  }

  /** Documents under the root, relative paths with `/`; dot files and dot folders are left out. */
  private list(skipped: SyncReport['skipped']): Array<{ rel: string; abs: string; st: Stats }> {
    const out: Array<{ rel: string; abs: string; st: Stats }> = [];
    const walk = (dir: string) => {
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch (err) {
        skipped.push({ source: relative(this.settings.root, dir).split(sep).join('/') || '.', why: describeError(err) });
        return;
      }
      for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        if (e.name.startsWith('.') || out.length >= MAX_FILES) continue;
        const abs = join(dir, e.name);
        if (e.isDirectory()) walk(abs);
        else if (e.isFile() || e.isSymbolicLink()) {
          try {
            const st = statSync(abs);
            if (st.isFile()) out.push({ rel: relative(this.settings.root, abs).split(sep).join('/'), abs, st });
          } catch {
            // A dangling link is not a document.
          }
        }
      }
    };
    walk(this.settings.root);
    return out;
  }

  /**
   * Brings the index up to date with the folder: files whose size or time changed are read again (and
   * re-chunked only if their bytes changed), removed files leave the index, and oversized, binary or
   * unknown files are skipped (`skipped` says why). Also reloads `synonyms.txt` from the root.
   */
  sync(): SyncReport {
    try {
      return this.syncOnce();
    } catch (err) {
      const code = String((err as { code?: unknown }).code ?? '');
      if (!BAD_FILE.test(code)) throw err;
      // Another process holds the file, or it broke under us: a new index from the documents.
      this.open(true, describeError(err));
      return this.syncOnce();
    }
  }

  /** The configured synonyms and the root's `synonyms.txt` (a file that cannot be read is skipped and said). */
  private loadSynonyms(skipped: SyncReport['skipped']): Synonyms {
    const synonyms = new Synonyms(this.settings.synonyms);
    try {
      for (const g of Synonyms.parse(readFileSync(join(this.settings.root, SYNONYMS_FILE), 'utf8'))) synonyms.add(g);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') skipped.push({ source: SYNONYMS_FILE, why: describeError(err) });
    }
    return synonyms;
  }

  private syncOnce(): SyncReport {
    const started = performance.now();
    const report: SyncReport = { files: 0, indexed: [], removed: [], skipped: [], chunks: 0, ms: 0 };
    this.synonyms = this.loadSynonyms(report.skipped);
    try {
      if (!statSync(this.settings.root).isDirectory()) throw new Error('not a folder');
    } catch (err) {
      // A folder that is gone for now (an unmounted disk) leaves the index as it was: answers go on.
      report.skipped.push({ source: this.settings.root, why: `the knowledge base folder cannot be read (the index is kept as it was): ${describeError(err)}` });
      report.chunks = Number(this.conn.prepare('SELECT count(*) FROM passages').pluck().get());
      report.ms = performance.now() - started;
      return report;
    }
    const known = new Map(
      (
        this.conn.prepare('SELECT path, mtime_ms, size, sha256 FROM files').all() as Array<{ path: string; mtime_ms: number; size: number; sha256: string }>
      ).map((r) => [r.path, r]),
    );
    const seen = new Set<string>();
    const insertFile = this.conn.prepare('INSERT OR REPLACE INTO files (path, mtime_ms, size, sha256, chunks) VALUES (?, ?, ?, ?, ?)');
    const deletePassages = this.conn.prepare('DELETE FROM passages WHERE path = ?');
    const deleteFile = this.conn.prepare('DELETE FROM files WHERE path = ?');
    const insertPassage = this.conn.prepare('INSERT INTO passages (path, title, heading, text) VALUES (?, ?, ?, ?)');
    const work = this.conn.transaction(() => {
      for (const { rel, abs, st } of this.list(report.skipped)) {
        if (rel === SYNONYMS_FILE) continue;
        const why = unreadable(abs, st, this.settings.maxFileBytes);
        if (why) {
          report.skipped.push({ source: rel, why });
          continue;
        }
        report.files++;
        seen.add(rel);
        const before = known.get(rel);
        if (before && before.mtime_ms === Math.trunc(st.mtimeMs) && before.size === st.size) continue;
        let bytes: Buffer;
        try {
          bytes = readFileSync(abs);
        } catch (err) {
          report.skipped.push({ source: rel, why: describeError(err) });
          seen.delete(rel);
          continue;
        }
        const sha = createHash('sha256').update(bytes).digest('hex');
        if (before && before.sha256 === sha) {
          insertFile.run(rel, Math.trunc(st.mtimeMs), st.size, sha, 0);
          continue;
        }
        const doc = documentOf(rel, bytes);
        if ('why' in doc) {
          report.skipped.push({ source: rel, why: doc.why });
          seen.delete(rel);
          continue;
        }
        const { title, chunks } = doc;
        deletePassages.run(rel);
        for (const c of chunks) insertPassage.run(rel, title, c.heading, c.text);
        insertFile.run(rel, Math.trunc(st.mtimeMs), st.size, sha, chunks.length);
        report.indexed.push(rel);
      }
      for (const path of known.keys()) {
        if (seen.has(path)) continue;
        deletePassages.run(path);
        deleteFile.run(path);
        report.removed.push(path);
      }
    });
    work();
    if (report.indexed.length || report.removed.length) this.search.invalidate();
    report.chunks = Number(this.conn.prepare('SELECT count(*) FROM passages').pluck().get());
    report.ms = performance.now() - started;
    return report;
  }

  /** The passages for a question: at most top_k, each covering at least min_score of it; none when nothing fits. */
  query(text: string, options: { topK?: number; minScore?: number } = {}): Passage[] {
    const terms = queryTerms(text, this.synonyms);
    const ask = () => this.search.search(terms, { topK: options.topK ?? this.settings.topK, minScore: options.minScore ?? this.settings.minScore });
    let hits: ReturnType<typeof ask>;
    try {
      hits = ask();
    } catch (err) {
      if (!BAD_FILE.test(String((err as { code?: unknown }).code ?? ''))) throw err;
      this.open(true, describeError(err));
      this.syncOnce();
      hits = ask();
    }
    return hits.map((h) => {
      const row = this.rowStmt.get(h.rowid) as { path: string; heading: string; text: string };
      return { source: row.path, heading: row.heading, text: row.text, score: Math.round(h.score * 1000) / 1000 };
    });
  }

  /** Number of passages in the index. */
  get size(): number {
    return Number(this.conn.prepare('SELECT count(*) FROM passages').pluck().get());
  }

  close(): void {
    if (this.conn.open) this.conn.close();
  }
}
