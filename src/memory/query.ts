// What a question asks of an FTS5 index: its content words, each widened by its synonyms, as one MATCH expression per word and for all.

/** Words that say nothing about the subject of a question (asked and answered text alike). */
const STOPWORDS = new Set(
  (
    'a an the and or but if then so of to in on at by for with from into onto over under about as is are was were be been being am ' +
    'do does did done doing have has had having i me my mine we us our ours you your yours he him his she her hers it its they them their ' +
    'this that these those there here what which who whom whose when where why how can could would should will shall may might must ' +
    'not no yes please tell say said know let lets get got just also very too much many any some all each every one ' +
    'hi hello hey ok okay well oh robot thanks thank up down out off than s t d ll re ve m'
  ).split(/\s+/),
);

/**
 * Words that can be the subject of a question but rarely are: common verbs, sizes and amounts
 * ("bring", "big", "nearest"). They count for a quarter of their rarity, so a question about a
 * stroller is answered by the passage about strollers even when it does not say "bring".
 */
const WEAK = new Set(
  (
    'bring brought come comes coming came go goes going went gone make makes made take takes took see sees seen saw look looks find finds found ' +
    'use uses used need needs want wants like likes give gives put keep leave leaves left speak speaks talk happen happens ' +
    'big bigger biggest small smaller large larger long longer short high tall heavy light old new good best better nearest near far ' +
    'extra more most less least much many few lot lots kind sort thing things way somewhere anywhere something anything everything ' +
    'should shall ought allowed possible able usually really actually exactly maybe today tomorrow yesterday now still already ever ' +
    'inside outside around somebody someone anyone people person'
  ).split(/\s+/),
);

/** How much a word of a question counts, before its rarity: 1, or WEAK_WEIGHT for a weak word. */
export const WEAK_WEIGHT = 0.25;

/** A content word (or a phrase of the synonym list) of a query and its alternatives (synonyms), each a word or a phrase of words. */
export interface QueryTerm {
  word: string;
  /** The words of a phrase (one word for a word). */
  phrase?: string[];
  alternatives: string[][];
  /** WEAK_WEIGHT for a weak word, else 1. */
  weight: number;
}

/** Words of a text as FTS5's unicode61 tokenizer splits them, lower-cased, diacritics kept. */
export function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** A naive singular form, only to look synonyms up (the index stems with Porter's algorithm itself). */
const singular = (w: string) =>
  w.length > 3 && w.endsWith('ies') ? `${w.slice(0, -3)}y` : w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w;

/** Synonym groups by each of their words and phrases (and singular forms): the group's other members, as word lists. */
export class Synonyms {
  private readonly byWord = new Map<string, string[][]>();
  /** Multi-word members, by their first word, longest first. */
  private readonly phrases = new Map<string, string[][]>();

  constructor(groups: readonly (readonly string[])[] = []) {
    for (const group of groups) this.add(group);
  }

  add(group: readonly string[]): void {
    const members = group.map(words).filter((w) => w.length > 0);
    for (const m of members) {
      const key = m.length === 1 ? singular(m[0]!) : m.join(' ');
      const known = this.byWord.get(key) ?? [];
      for (const other of members) if (other.join(' ') !== m.join(' ') && !known.some((k) => k.join(' ') === other.join(' '))) known.push(other);
      this.byWord.set(key, known);
      if (m.length > 1) {
        const list = this.phrases.get(m[0]!) ?? [];
        if (!list.some((p) => p.join(' ') === m.join(' '))) list.push(m);
        list.sort((a, b) => b.length - a.length);
        this.phrases.set(m[0]!, list);
      }
    }
  }

  /** The listed phrase that starts at `ws[i]`, if any (longest first). */
  phraseAt(ws: readonly string[], i: number): string[] | undefined {
    return this.phrases.get(ws[i]!)?.find((p) => p.every((w, k) => ws[i + k] === w));
  }

  /** Parses `synonyms.txt`: one group per line, members separated by commas; `#` starts a comment. */
  static parse(text: string): string[][] {
    return text
      .split('\n')
      .map((l) => l.replace(/#.*/, '').trim())
      .filter(Boolean)
      .map((l) =>
        l
          .split(',')
          .map((w) => w.trim())
          .filter(Boolean),
      )
      .filter((g) => g.length >= 2);
  }

  of(word: string): string[][] {
    return this.byWord.get(word.includes(' ') ? word : singular(word)) ?? this.byWord.get(word) ?? [];
  }

  get size(): number {
    return this.byWord.size;
  }
}

/** The content words of `text` (stop words and one-letter words left out, each once) with their synonyms; a listed phrase is one term. */
export function queryTerms(text: string, synonyms?: Synonyms): QueryTerm[] {
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  const ws = words(text);
  for (let i = 0; i < ws.length; i++) {
    const phrase = synonyms?.phraseAt(ws, i);
    if (phrase) {
      const key = phrase.join(' ');
      if (!seen.has(key)) terms.push({ word: key, phrase, alternatives: synonyms!.of(key), weight: 1 });
      seen.add(key);
      i += phrase.length - 1;
      continue;
    }
    const w = ws[i]!;
    if (STOPWORDS.has(w) || (w.length < 2 && !/\d/.test(w)) || seen.has(w)) continue;
    seen.add(w);
    // "25th" is written "25" as often: both are looked for.
    const ordinal = /^(\d+)(?:st|nd|rd|th)$/.exec(w);
    const alternatives = [...(synonyms?.of(w) ?? []), ...(ordinal ? [[ordinal[1]!]] : [])];
    terms.push({ word: w, alternatives, weight: WEAK.has(w) ? WEAK_WEIGHT : 1 });
  }
  return terms.slice(0, 24);
}

const quote = (phrase: readonly string[]) => `"${phrase.join(' ').replace(/"/g, '""')}"`;

/** The MATCH expression of one term: the word or any of its alternatives (`"ticket" OR "admission"`). */
export function termMatch(term: QueryTerm): string {
  const all = [term.phrase ?? [term.word], ...term.alternatives].map(quote);
  return all.length === 1 ? all[0]! : `(${all.join(' OR ')})`;
}

/** The MATCH expression of a whole query: any of its terms. */
export function anyMatch(terms: readonly QueryTerm[]): string {
  return terms.map(termMatch).join(' OR ');
}

/** Inverse document frequency as BM25 weighs it; a word no passage has gets the highest weight. */
export function idf(docs: number, df: number): number {
  return Math.log(1 + (docs - df + 0.5) / (df + 0.5));
}
