// Cuts a growing text into sentences as they complete, so each one can go to speech synthesis while the rest is still being written.

/** Text after a boundary that makes the boundary final: a letter or a sentence terminator. */
const SETTLES = /[\p{L}.!?…。！？]/u;

/**
 * Fed the whole text so far (each call a longer prefix of the final text), returns the sentences that
 * became complete since the last call, trimmed, in order, each exactly once. Boundaries are Unicode
 * sentence boundaries (Intl.Segmenter, UAX #29). A boundary counts only once a letter or terminator
 * follows it, because the rules look ahead ("It costs 5. 3 apples" may split before " 3" but not
 * before " 3 apples"), so a sentence is never emitted and then found to continue. With `complete`,
 * the rest of the text is the last sentence.
 */
export class SentenceSplitter {
  /** Characters of the text already emitted as sentences. */
  private emitted = 0;
  private last = '';
  /**
   * Made at the first update, not at module load: the first Intl.Segmenter of a process loads ICU's
   * break rules (about 10-16 ms), which `cortexd run` would otherwise pay before its first tick; later
   * ones cost microseconds.
   */
  private segmenter: Intl.Segmenter | undefined;

  update(text: string, complete = false): string[] {
    if (!text.startsWith(this.last.slice(0, this.emitted))) {
      throw new Error('SentenceSplitter: the text must only grow');
    }
    this.last = text;
    const out: string[] = [];
    const rest = text.slice(this.emitted);
    const segments = [...(this.segmenter ??= new Intl.Segmenter('en', { granularity: 'sentence' })).segment(rest)];
    for (let i = 0; i < segments.length; i++) {
      const seg = segments[i]!;
      const isLast = i === segments.length - 1;
      if (isLast && !complete) break;
      if (!isLast && !SETTLES.test(rest.slice(seg.index + seg.segment.length))) break;
      this.emitted += seg.segment.length;
      const s = seg.segment.trim();
      if (s) out.push(s);
    }
    return out;
  }

  /** Characters already emitted. */
  get consumed(): number {
    return this.emitted;
  }
}

/** All sentences of a whole text (the non-streamed path and tests). */
export function splitSentences(text: string): string[] {
  return new SentenceSplitter().update(text, true);
}
