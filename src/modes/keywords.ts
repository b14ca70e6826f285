// Keyword matching for input_triggered rules: case- and accent-insensitive, Unicode-normalised, whole words and phrases.

/**
 * Matching rules (the spec leaves them open; these are cortexd's decisions):
 * - Text and keywords are normalised with NFKC (full-width letters, ligatures and compatibility
 *   forms become their plain equivalents), lower-cased, and stripped of diacritics (NFD, then every
 *   combining mark removed), so "CAFÉ", "Café" and "cafe" are the same word. Speech recognisers
 *   are inconsistent about accents, so folding them avoids silent misses.
 * - Text is cut into words: runs of letters and digits, with an inner apostrophe kept ("don't").
 *   Punctuation and any whitespace separate words. Scripts written without spaces (Han, Hiragana,
 *   Katakana, Thai, Lao, Khmer, Myanmar) make one word per character.
 * - A keyword matches when its words occur contiguously, as whole words, in the text: "stop" does
 *   not match "stopwatch", "tell me" matches "Tell, me" and "tell\nme", "go-to" matches "go to".
 * - A keyword with no letters or digits never matches.
 */

const COMBINING_MARKS = /\p{M}+/gu;
const APOSTROPHES = /[\u2019\u2018\u02BC\uFF07]/g;
/** One character of a script written without spaces between words. */
const NO_SPACE_SCRIPT = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/u;
const WORD = /[\p{L}\p{N}]+(?:'[\p{L}\p{N}]+)*/gu;

/** NFKC, lower case, diacritics removed, typographic apostrophes unified. */
export function normaliseText(text: string): string {
  return text.normalize('NFKC').toLowerCase().normalize('NFD').replace(COMBINING_MARKS, '').normalize('NFC').replace(APOSTROPHES, "'");
}

/** The words of `text` after normalisation, in order. */
export function words(text: string): string[] {
  const out: string[] = [];
  for (const match of normaliseText(text).matchAll(WORD)) {
    const word = match[0];
    if (!NO_SPACE_SCRIPT.test(word)) {
      out.push(word);
      continue;
    }
    // Split runs that mix no-space scripts with others: each no-space character is its own word.
    let run = '';
    for (const ch of word) {
      if (NO_SPACE_SCRIPT.test(ch)) {
        if (run) out.push(run);
        run = '';
        out.push(ch);
      } else run += ch;
    }
    if (run) out.push(run);
  }
  return out;
}

/** A keyword prepared once: its words, for repeated matching. */
export interface CompiledKeyword {
  keyword: string;
  words: string[];
}

export function compileKeyword(keyword: string): CompiledKeyword {
  return { keyword, words: words(keyword) };
}

/** True when the keyword's words occur contiguously in `textWords`. */
export function matchesWords(textWords: readonly string[], keyword: CompiledKeyword): boolean {
  const k = keyword.words;
  if (k.length === 0 || k.length > textWords.length) return false;
  outer: for (let i = 0; i + k.length <= textWords.length; i++) {
    for (let j = 0; j < k.length; j++) if (textWords[i + j] !== k[j]) continue outer;
    return true;
  }
  return false;
}

/** The first keyword (in list order) found in `text`, or undefined. */
export function findKeyword(text: string | readonly string[], keywords: readonly CompiledKeyword[]): string | undefined {
  const textWords = typeof text === 'string' ? words(text) : text;
  return keywords.find((k) => matchesWords(textWords, k))?.keyword;
}
