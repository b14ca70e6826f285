// Ranks passages of an FTS5 table for a question: BM25 finds the candidates, and the share of the question each covers decides if it counts.
import type { Db } from './db.js';
import { anyMatch, idf, type QueryTerm, termMatch } from './query.js';

/** A passage found for a question. `score` is the share of the question it covers (0..1), `bm25` FTS5's rank (higher is better). */
export interface Hit {
  rowid: number;
  score: number;
  bm25: number;
}

export interface SearchOptions {
  topK: number;
  minScore: number;
}

/** How many BM25 candidates are looked at for each passage asked for. */
const CANDIDATES_PER_RESULT = 4;
const MIN_CANDIDATES = 12;
/** Below this many passages no word counts as too frequent to matter. */
const MIN_DOCS_FOR_FREQUENT = 40;

/**
 * Searches one external-content FTS5 table (`fts`, rowids of its content table). A question's words
 * are weighed by rarity (BM25's idf); a passage's score is the weight of the words it has over the
 * weight of all the question's words, so a word nothing in the index has (the subject of a question
 * the documents do not answer) pulls every score down and `minScore` leaves the noise out. Document
 * counts per term are cached until `invalidate()` (call it after a write).
 */
export class FtsSearch {
  private readonly dfCache = new Map<string, number>();
  private docs: number | undefined;
  private readonly countStmt;
  private readonly docsStmt;
  private readonly candidatesStmt;
  private readonly matchesStmt;

  constructor(
    db: Db,
    fts: string,
    /** `bm25(fts, ...)` column weights, e.g. `4.0, 2.0, 1.0`. */
    weights: string,
  ) {
    this.countStmt = db.prepare(`SELECT count(*) FROM (SELECT 1 FROM ${fts} WHERE ${fts} MATCH ? LIMIT ?)`).pluck();
    this.docsStmt = db.prepare(`SELECT count(*) FROM ${fts}`).pluck();
    this.candidatesStmt = db.prepare(`SELECT rowid, bm25(${fts}, ${weights}) AS rank FROM ${fts} WHERE ${fts} MATCH ? ORDER BY rank LIMIT ?`);
    this.matchesStmt = db.prepare(`SELECT rowid FROM ${fts} WHERE ${fts} MATCH ? AND rowid IN (SELECT value FROM json_each(?))`).pluck();
  }

  invalidate(): void {
    this.dfCache.clear();
    this.docs = undefined;
  }

  /** Passages that match, counted up to `cap` + 1 (past it the exact number does not matter and costs a scan). */
  private df(match: string, cap: number): number {
    let n = this.dfCache.get(match);
    if (n === undefined) {
      n = Number(this.countStmt.get(match, cap + 1));
      if (this.dfCache.size > 5000) this.dfCache.clear();
      this.dfCache.set(match, n);
    }
    return n;
  }

  /** The best passages for `terms`, best first, each covering at least `minScore` of the question. */
  search(asked: readonly QueryTerm[], options: SearchOptions): Hit[] {
    let terms = asked;
    if (terms.length === 0) return [];
    this.docs ??= Number(this.docsStmt.get());
    const docs = this.docs;
    if (docs === 0) return [];
    // A word more than half the passages have says nothing about which one answers (a corpus stop word):
    // left out of the ranking and the score, which also keeps a query from scoring most of the index.
    const frequent = docs >= MIN_DOCS_FOR_FREQUENT ? Math.floor(docs / 2) : docs + 1;
    const kept = terms.map((term) => ({ term, match: termMatch(term), df: this.df(termMatch(term), frequent) })).filter((t) => t.df <= frequent);
    if (kept.length === 0) return [];
    terms = kept.map((k) => k.term);
    const matches = kept.map((k) => k.match);
    const weights = kept.map((k) => k.term.weight * idf(docs, k.df));
    const total = weights.reduce((a, b) => a + b, 0);
    const limit = Math.max(MIN_CANDIDATES, options.topK * CANDIDATES_PER_RESULT);
    const candidates = this.candidatesStmt.all(anyMatch(terms), limit) as Array<{ rowid: number; rank: number }>;
    if (candidates.length === 0) return [];
    const covered = new Map<number, number>(candidates.map((c) => [c.rowid, 0]));
    const ids = JSON.stringify(candidates.map((c) => c.rowid));
    matches.forEach((m, i) => {
      for (const rowid of this.matchesStmt.all(m, ids) as number[]) covered.set(rowid, (covered.get(rowid) ?? 0) + weights[i]!);
    });
    return candidates
      .map((c) => ({ rowid: c.rowid, bm25: -c.rank, score: total > 0 ? (covered.get(c.rowid) ?? 0) / total : 0 }))
      .filter((h) => h.score >= options.minScore)
      .sort((a, b) => b.score - a.score || b.bm25 - a.bm25)
      .slice(0, options.topK);
  }
}
