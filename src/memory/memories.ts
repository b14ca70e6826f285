// What the robot remembers across restarts: facts people told it, places, conversation summaries; one private SQLite file, bounded, searchable, forgettable.
import { join } from 'node:path';
import { type Db, openDb } from './db.js';
import { queryTerms } from './query.js';
import { FtsSearch } from './search.js';

export const MEMORY_KINDS = ['fact', 'place', 'summary'] as const;
export type MemoryKind = (typeof MEMORY_KINDS)[number];

/** One memory as listed, searched and exported. */
export interface Memory {
  id: number;
  kind: MemoryKind;
  /** Whose fact it is ('' when the person gave no name). */
  person: string;
  text: string;
  created_at: string;
  /** With search results: the share of the question it covers (0..1). */
  score?: number;
}

/** Longest text kept per memory (a summary of a long conversation, a rambling sentence). */
export const MAX_MEMORY_CHARS = 1000;

function setup(db: Db): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS memories (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, person TEXT NOT NULL DEFAULT '', text TEXT NOT NULL, created_at TEXT NOT NULL);
    CREATE INDEX IF NOT EXISTS memories_person ON memories(person);
    CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(text, person, content='memories', content_rowid='id', tokenize='porter unicode61 remove_diacritics 2');
    CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
      INSERT INTO memory_fts(rowid, text, person) VALUES (new.id, new.text, new.person);
    END;
    CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
      INSERT INTO memory_fts(memory_fts, rowid, text, person) VALUES ('delete', old.id, old.text, old.person);
    END;
    CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE ON memories BEGIN
      INSERT INTO memory_fts(memory_fts, rowid, text, person) VALUES ('delete', old.id, old.text, old.person);
      INSERT INTO memory_fts(rowid, text, person) VALUES (new.id, new.text, new.person);
    END;
  `);
}

/** `<state dir>/memory/<config>.sqlite`: the memory of one configuration. */
export function memoryFileOf(stateDir: string, configName: string): string {
  return join(stateDir, 'memory', `${encodeURIComponent(configName) || '_'}.sqlite`);
}

/** The memory store; the owner closes it. A corrupt or locked file is moved aside (kept for a person) and a new one started. */
export class MemoryStore {
  readonly db: Db;
  readonly recovered: string | undefined;
  readonly inMemory: boolean;
  private readonly search: FtsSearch;

  constructor(
    readonly file: string,
    private readonly maxMemories: number,
  ) {
    const opened = openDb(file, setup, 'keep');
    this.db = opened.db;
    this.recovered = opened.recovered;
    this.inMemory = opened.inMemory;
    this.search = new FtsSearch(this.db, 'memory_fts', '1.0, 0.5');
  }

  /**
   * Remembers `text` of `person`; the same text of the same person again only refreshes its time.
   * Past the bound, the oldest summaries go first, then the oldest facts. Returns the memory's id.
   */
  add(kind: MemoryKind, person: string, text: string, now = new Date()): number {
    const clean = text.replace(/\s+/g, ' ').trim().slice(0, MAX_MEMORY_CHARS);
    const at = now.toISOString();
    const id = this.db.transaction(() => {
      const same = this.db.prepare('SELECT id FROM memories WHERE kind = ? AND person = ? AND lower(text) = lower(?)').pluck().get(kind, person, clean) as
        | number
        | undefined;
      if (same !== undefined) {
        this.db.prepare('UPDATE memories SET created_at = ? WHERE id = ?').run(at, same);
        return same;
      }
      const inserted = Number(
        this.db.prepare('INSERT INTO memories (kind, person, text, created_at) VALUES (?, ?, ?, ?)').run(kind, person, clean, at).lastInsertRowid,
      );
      const over = Number(this.db.prepare('SELECT count(*) FROM memories').pluck().get()) - this.maxMemories;
      if (over > 0) {
        this.db
          .prepare(
            "DELETE FROM memories WHERE id IN (SELECT id FROM memories WHERE id != ? ORDER BY CASE kind WHEN 'summary' THEN 0 WHEN 'fact' THEN 1 ELSE 2 END, created_at, id LIMIT ?)",
          )
          .run(inserted, over);
      }
      return inserted;
    })();
    this.search.invalidate();
    return id;
  }

  /** Replaces the places (kind `place`) with these texts (the saved locations, read again when they change). */
  setPlaces(texts: readonly string[], now = new Date()): void {
    this.db.transaction(() => {
      this.db.prepare("DELETE FROM memories WHERE kind = 'place'").run();
      for (const t of texts) this.db.prepare("INSERT INTO memories (kind, person, text, created_at) VALUES ('place', '', ?, ?)").run(t, now.toISOString());
    })();
    this.search.invalidate();
  }

  list(options: { person?: string; kind?: MemoryKind } = {}): Memory[] {
    const rows = this.db.prepare('SELECT id, kind, person, text, created_at FROM memories ORDER BY id').all() as Memory[];
    return rows.filter(
      (m) =>
        (options.person === undefined || m.person.toLowerCase() === options.person.toLowerCase()) && (options.kind === undefined || m.kind === options.kind),
    );
  }

  /** Memories relevant to `text`, best first (same scoring as the knowledge base). */
  find(text: string, options: { topK: number; minScore: number }): Memory[] {
    const hits = this.search.search(queryTerms(text), options);
    const get = this.db.prepare('SELECT id, kind, person, text, created_at FROM memories WHERE id = ?');
    return hits.map((h) => ({ ...(get.get(h.rowid) as Memory), score: Math.round(h.score * 1000) / 1000 }));
  }

  /** Forgets memories by id; returns how many were removed. */
  forget(ids: readonly number[]): number {
    if (ids.length === 0) return 0;
    const del = this.db.prepare('DELETE FROM memories WHERE id = ?');
    const n = this.db.transaction(() => ids.reduce((sum, id) => sum + del.run(id).changes, 0))();
    this.scrub();
    return n;
  }

  /** Forgets every fact and summary of a person (names compared case-insensitively); returns how many were removed. */
  forgetPerson(person: string): number {
    const ids = this.db.prepare('SELECT id FROM memories WHERE lower(person) = lower(?)').pluck().all(person) as number[];
    return this.forget(ids);
  }

  /**
   * Makes a deletion final on disk: the full-text index is merged (no segment keeps the old words),
   * the write-ahead log is folded in and truncated, and free pages (zeroed by secure_delete) are dropped.
   */
  private scrub(): void {
    this.search.invalidate();
    this.db.exec("INSERT INTO memory_fts(memory_fts) VALUES('optimize')");
    if (!this.inMemory) {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
      this.db.exec('VACUUM');
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    }
  }

  get size(): number {
    return Number(this.db.prepare('SELECT count(*) FROM memories').pluck().get());
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
